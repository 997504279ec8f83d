"""ModelForms over the roster's models: the fields, their limits and choices
come from the models; DynamoDB's refusals become form errors (see the views)."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.text import slugify

from dynamo_app.exceptions import AlreadyExists, UniqueViolation
from dynamo_app.forms import ModelForm

from .models import Player, Team


class TeamForm(ModelForm[Team]):
    class Meta:
        model = Team
        fields = ["name", "city"]

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if not slugify(name):
            raise ValidationError("Use at least one letter or digit.")
        # The team's key: its name as a URL slug (so a second "Tokyo Cranes" is refused).
        self.instance.team_id = slugify(name)
        return name

    def exists_error(self, exc: AlreadyExists) -> ValidationError:
        return ValidationError({"name": "A team with this name already exists."})


class PlayerForm(ModelForm[Player]):
    """Edits a player; the hidden version field refuses an edit based on a stale read."""

    class Meta:
        model = Player
        fields = ["player_name", "uniform_number", "position"]

    def __init__(self, *args: Any, team: Team, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.team = team

    def unique_error(self, exc: UniqueViolation) -> ValidationError:
        """Names who wears the number (one Query on the Roster's local index lsi1)."""
        number = exc.value
        by_number = Player.objects.using_index("lsi1").filter(team_id=self.team.team_id)
        holder = by_number.filter(uniform_number=number).first()
        who = f" by {holder.player_name}" if holder else ""
        message = (
            f"Number {number} is already worn{who} in {self.team.name}. Choose another number."
        )
        return ValidationError({"uniform_number": message})

    def stale_error(self, stored: Player | None) -> ValidationError:
        if stored is None:
            return super().stale_error(stored)
        return ValidationError(
            f"Someone else saved this player while you were editing: it is now "
            f"#{stored.uniform_number} {stored.player_name} ({stored.position or 'no position'}). "
            "Nothing was changed. Check your values and save again to replace theirs."
        )


class AddPlayerForm(PlayerForm):
    """Carries an idempotency key made when the form is shown: sending the same
    form twice (a double click, a reload, a retry) adds the player once."""

    idempotency_key = forms.UUIDField(widget=forms.HiddenInput, initial=uuid.uuid4)

    def validate_unique(self) -> None:
        """Not at is_valid(): a form sent twice would find its own first player's
        number taken. The write decides: the same key is "sent twice", a number
        taken by someone else is refused by the transaction (unique_error)."""
