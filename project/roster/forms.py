"""Plain Django forms; the views turn DynamoDB's refusals into form errors."""

import uuid

from django import forms
from django.utils.text import slugify

POSITIONS = [
    ("", "—"),
    ("Pitcher", "Pitcher"),
    ("Catcher", "Catcher"),
    ("First base", "First base"),
    ("Second base", "Second base"),
    ("Third base", "Third base"),
    ("Shortstop", "Shortstop"),
    ("Left field", "Left field"),
    ("Center field", "Center field"),
    ("Right field", "Right field"),
]


class TeamForm(forms.Form):
    name = forms.CharField(max_length=60)
    city = forms.CharField(max_length=60, required=False)

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"].strip()
        if not slugify(name):
            raise forms.ValidationError("Use at least one letter or digit.")
        return name

    @property
    def team_id(self) -> str:
        """The team's key: its name as a URL slug (so a second "Tokyo Cranes" is refused)."""
        return slugify(self.cleaned_data["name"])


class PlayerForm(forms.Form):
    player_name = forms.CharField(label="Name", max_length=60)
    uniform_number = forms.IntegerField(label="Uniform number", min_value=0, max_value=99)
    position = forms.ChoiceField(choices=POSITIONS, required=False)


class AddPlayerForm(PlayerForm):
    """Carries an idempotency key made when the form is shown: sending the same
    form twice (a double click, a reload, a retry) adds the player once."""

    idempotency_key = forms.UUIDField(widget=forms.HiddenInput, initial=uuid.uuid4)


class EditPlayerForm(PlayerForm):
    """Carries the version of the player it was filled from (optimistic locking)."""

    version = forms.IntegerField(widget=forms.HiddenInput)
