"""The demo's own tests, run by ``python manage.py test`` (plain Django TestCases).

``TEST_RUNNER = "dynamo_app.test.runner.DynamoTestRunner"`` (project/settings.py)
gives the run a throwaway DynamoDB and every test empty tables, as Django gives
it a test database: the development data is never touched.
"""

import uuid

from django.test import TestCase
from django.urls import reverse

from .models import LEAGUE, Player, Team


class SampleTeamsTests(TestCase):
    def test_a_first_click_creates_the_three_sample_teams(self) -> None:
        response = self.client.post(reverse("roster:sample"), follow=True)
        self.assertContains(response, "Created 3 sample teams.")
        self.assertContains(response, "Osaka Otters")

    def test_b_every_test_starts_with_empty_tables(self) -> None:
        self.assertEqual(list(Team.objects.using_index("gsi1").filter(league=LEAGUE)), [])
        response = self.client.post(reverse("roster:sample"), follow=True)
        self.assertContains(response, "Created 3 sample teams.")  # not "already there"


class PlayerTests(TestCase):
    def setUp(self) -> None:
        self.client.post(reverse("roster:sample"))

    def test_a_taken_number_is_refused_and_names_its_wearer(self) -> None:
        url = reverse("roster:player_add", args=["team-001"])
        form = {"player_name": "Zoe", "uniform_number": 18, "idempotency_key": uuid.uuid4()}
        response = self.client.post(url, form)
        self.assertContains(response, "Number 18 is already worn by Alice in Team 001.")
        self.assertEqual(len(list(Player.objects.filter(team_id="team-001"))), 14)

    def test_a_free_number_is_added_once_even_if_the_form_is_sent_twice(self) -> None:
        url = reverse("roster:player_add", args=["team-001"])
        form = {"player_name": "Zoe", "uniform_number": 77, "idempotency_key": uuid.uuid4()}
        self.client.post(url, form)
        response = self.client.post(url, form, follow=True)
        self.assertContains(response, "#77 Zoe was already added; the form was sent twice.")
        self.assertEqual(len(list(Player.objects.filter(team_id="team-001"))), 15)
