"""The model of tests/test_rest_framework.py (imported by its URLs too)."""

from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator

from dynamo_app import models


def not_admin(value):
    if value == "admin":
        raise ValidationError("%(value)s is reserved.", code="reserved", params={"value": value})


class Member(models.Model):
    club = models.StringField(partition_key=True)
    member_id = models.StringField(sort_key=True, validators=[not_admin])
    name = models.StringField(max_length=20)
    email = models.StringField(null=True, validators=[EmailValidator()])
    tier = models.StringField(choices=[("ga", "General"), ("vip", "VIP")], default="ga")
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

    def clean(self):
        if self.tier == "vip" and not self.email:
            raise ValidationError("A VIP member needs an email address.")
