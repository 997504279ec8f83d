"""The content types and permissions of DynamoDB models, and Django's commands
that read them (dynamo_app.permissions)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command

from project.roster.models import Player, Team

pytestmark = pytest.mark.django_db


def test_a_dynamodb_models_content_type_names_its_model():
    assert ContentType.objects.get_for_model(Player).model_class() is Player
    assert ContentType.objects.get(app_label="roster", model="team").model_class() is Team
    assert ContentType(app_label="roster", model="gone").model_class() is None


def test_remove_stale_contenttypes_keeps_those_of_dynamodb_models_and_their_grants():
    """Django's command deletes a content type whose model_class() is None, with its
    permissions, their grants and its LogEntry rows: it did so for every DynamoDB
    model. Now only a content type of no model at all goes."""
    player = ContentType.objects.get_for_model(Player)
    view = Permission.objects.get(content_type=player, codename="view_player")
    staff = User.objects.create_user("staff-perm", is_staff=True)
    staff.user_permissions.add(view)
    LogEntry.objects.create(
        user=staff, content_type=player, object_id="t1,p1", object_repr="p1", action_flag=CHANGE
    )
    gone = ContentType.objects.create(app_label="roster", model="gone")
    out = StringIO()

    call_command("remove_stale_contenttypes", "--noinput", verbosity=2, stdout=out)

    assert out.getvalue() == "Deleting stale content type 'roster | gone'\n"
    assert not ContentType.objects.filter(pk=gone.pk).exists()
    assert set(
        Permission.objects.filter(content_type=player).values_list("codename", flat=True)
    ) == {
        "add_player",
        "change_player",
        "delete_player",
        "view_player",
    }
    assert list(User.objects.get(pk=staff.pk).user_permissions.all()) == [view]
    assert LogEntry.objects.filter(content_type=player).count() == 1
