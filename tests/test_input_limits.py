"""Input that would cost too much is refused before it is parsed deeply: a form's
JSON nested deeper than DynamoDB stores, a number longer than any it holds. Each is a
ValidationError naming the field, never a RecursionError or a ValueError (a 500)."""

import json
from decimal import Decimal

import pytest

from dynamo_app import models
from dynamo_app.exceptions import ValidationError
from dynamo_app.forms import ModelForm, modelform_factory
from dynamo_app.testing import count_requests


class LimDoc(models.Model):
    doc_id = models.StringField(partition_key=True)
    body = models.JSONField(null=True, blank=True)
    count = models.IntegerField(null=True, blank=True)
    amount = models.DecimalField(null=True, blank=True)


DocForm: type[ModelForm] = modelform_factory(LimDoc, fields="__all__")
HUGE = 10**5000  # more digits than Python writes out as text (4,300 by default)


@pytest.mark.parametrize(
    "body, said",
    [
        ("[" * 5000 + "]" * 5000, "nest more than 32 levels"),
        ('{"a": ' + "7" * 5000 + "}", "more than 200 digits"),
        ("-" + "1" * 300 + ".5", "more than 200 digits"),
    ],
)
def test_a_costly_json_input_is_an_error_on_its_field(body, said):
    form = DocForm(data={"doc_id": "d", "body": body})
    assert not form.is_valid()
    assert form.errors == {"body": ["Enter a valid JSON."]}
    with pytest.raises(json.JSONDecodeError, match=said):
        json.loads(body, cls=DocForm.base_fields["body"].decoder)
    assert body[-20:] in str(form["body"])  # shown again as typed, never parsed


def test_text_that_only_looks_costly_is_parsed():
    body = '{"note": "' + "[" * 100 + "9" * 300 + '", "n": [[1]]}'
    form = DocForm(data={"doc_id": "d", "body": body})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["body"]["n"] == [[1]]


@pytest.mark.parametrize(
    "values, field",
    [
        ({"count": HUGE}, "count"),
        ({"count": -HUGE}, "count"),
        ({"body": {"a": [HUGE]}}, "body"),
        ({"amount": Decimal(HUGE)}, "amount"),
    ],
)
def test_a_number_too_long_for_python_to_write_is_a_validation_error(dynamo_db, values, field):
    doc = LimDoc(doc_id="d", **values)
    with pytest.raises(ValidationError) as error:
        doc.full_clean()
    assert list(error.value.message_dict) == [field]
    assert "outside DynamoDB's range" in str(error.value) or "digits" in str(error.value)
    with count_requests() as sent, pytest.raises(ValidationError, match=f"LimDoc.{field}"):
        doc.save()
    assert sent.total == 0
