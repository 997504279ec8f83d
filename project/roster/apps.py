"""The demo app: the seed's baseball roster on DynamoDB."""

from django.apps import AppConfig


class RosterConfig(AppConfig):
    name = "project.roster"
    label = "roster"
    verbose_name = "Baseball roster"
