"""The model of tests/test_rest_framework.py (imported by its URLs too)."""

from dynamo_app import models


class Member(models.Model):
    club = models.StringField(partition_key=True)
    member_id = models.StringField(sort_key=True)
    name = models.StringField(max_length=20)
    number = models.IntegerField(null=True)
    balance = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    photo = models.BinaryField(null=True)
    roles = models.StringSetField()
    joined = models.DateTimeField(null=True)
    profile = models.JSONField(null=True)
    version = models.VersionField()

    class Meta:
        table_name = "drf_member"
        unique = [models.Unique("number", within="club")]
