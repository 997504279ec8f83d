"""Key templates: how a model in a shared table builds its stored key attributes.

``"PLAYER#{uniform_number:03d}"`` is literal text and fields, written with
Python's format syntax. A template renders to a string (every key attribute
of a shared table is of type S), and string order is byte order: so a number
in a sort key needs a zero-padded width (``03d``) to sort as numbers do, and
a value that would not fit that width is refused when it is written, never
stored out of order.

A query names fields, never the stored attributes: ``filter(team_id=...)``
becomes the rendered partition key, and sort-key lookups become conditions on
the rendered sort key, always kept inside the model's literal prefix so that
another entity's items in the same partition are never read.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..exceptions import ValidationError
from ..expressions import LOOKUPS, Attr, Condition, all_of
from .fields import IntegerField

if TYPE_CHECKING:
    from .fields import Field
    from .options import Options, TemplateKeySchema

# The highest code point: every string that starts with a prefix sorts before
# prefix + this (DynamoDB compares strings by their UTF-8 bytes, as Python does by code point).
TOP = "\U0010ffff"
_PADDED = re.compile(r"^0(\d+)d$")


@dataclass(frozen=True)
class Slot:
    """One ``{field:spec}`` of a template."""

    name: str
    spec: str
    after: str  # the literal text that follows it, up to the next slot


class KeyTemplate:
    """One parsed template for one stored key attribute (``attribute``)."""

    def __init__(self, attribute: str, text: str) -> None:
        self.attribute = attribute
        self.text = text
        self.prefix = ""
        self.slots: tuple[Slot, ...] = ()
        self.error: str | None = None
        try:
            parts = list(string.Formatter().parse(text))
        except ValueError as exc:
            self.error = f"is not a format string ({exc})"
            return
        slots: list[Slot] = []
        for literal, name, spec, conversion in parts:
            if slots:
                last = slots[-1]
                slots[-1] = Slot(last.name, last.spec, last.after + literal)
            else:
                self.prefix += literal
            if name is None:
                continue
            if conversion or not name.isidentifier() or "{" in (spec or ""):
                self.error = f"has {{{name}...}}: write {{field}} or {{field:spec}} only"
                return
            slots.append(Slot(name, spec or "", ""))
        self.slots = tuple(slots)

    def __repr__(self) -> str:
        return f"KeyTemplate({self.attribute!r}, {self.text!r})"

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(slot.name for slot in self.slots)

    # --- rendering

    def render(self, values: dict[str, Any], fields: dict[str, Field], model: str) -> str:
        """The stored text for ``values`` (every field of the template given)."""
        return self.render_prefix(values, fields, model, len(self.slots))

    def render_prefix(
        self, values: dict[str, Any], fields: dict[str, Field], model: str, n: int
    ) -> str:
        """The prefix shared by every key whose first ``n`` fields have ``values``:
        the literal text, those fields, and the literal after the last of them."""
        out = [self.prefix]
        for slot in self.slots[:n]:
            out.append(render_value(fields[slot.name], values[slot.name], slot.spec, model))
            out.append(slot.after)
        return "".join(out)

    def can_share_keys_with(self, other: KeyTemplate) -> bool:
        """Whether the two templates could render the same text: only when one's
        literal prefix starts the other's (disjoint prefixes never meet)."""
        a, b = self.prefix, other.prefix
        return a.startswith(b) or b.startswith(a)


def render_value(field: Field, value: Any, spec: str, model: str) -> str:
    """One field's text in a key: its stored text, or ``format(value, spec)``; a
    padded number must fit its width and not be negative (else sort order breaks)."""
    if value is None:
        raise field.invalid(value, f"{field.description} (it is part of a key)")
    encoded = field.encode(value)
    ((_, text),) = encoded.items()  # type: ignore[union-attr]
    if not spec:
        return str(text)
    try:
        formatted = format(value, spec)
    except (ValueError, TypeError) as exc:
        raise field.invalid(value, f"a value the key format {spec!r} takes ({exc})") from None
    padded = _PADDED.match(spec)
    if padded and (len(formatted) != int(padded.group(1)) or formatted.startswith("-")):
        raise ValidationError(
            f"{model}.{field.name}={value!r} does not fit the key format {spec!r} (a number "
            f"from 0 to {'9' * int(padded.group(1))}): stored, it would sort out of order. "
            "Widen the format in Meta.keys.",
            model=model,
            field=field.name,
        )
    return formatted


def key_problems(
    template: KeyTemplate, fields: dict[str, Field], *, sort: bool, table_key: bool
) -> Iterable[tuple[str, str]]:
    """``(check id, text)`` for what is wrong with one template of a model."""
    where = f"Meta.keys[{template.attribute!r}] = {template.text!r}"
    if template.error:
        yield "dynamo.E116", f"{where} {template.error}."
        return
    if not template.slots and not template.prefix:
        yield "dynamo.E116", f"{where} is empty; DynamoDB refuses an empty key."
    for slot in template.slots:
        field = fields.get(slot.name)
        if field is None:
            yield "dynamo.E116", f"{where} names {slot.name!r}, which is not a field."
            continue
        if field.key_type not in ("S", "N"):
            yield (
                "dynamo.E116",
                (
                    f"{where} names {slot.name!r}, a {type(field).__name__}: only fields stored as "
                    "a string or a number can be part of a key."
                ),
            )
        elif table_key and field.null:
            yield (
                "dynamo.E116",
                (
                    f"{where} names {slot.name!r}, which is null=True: the table key is never "
                    "empty (a null field may fill an index key: the item is then left out of it)."
                ),
            )
        if sort and field.key_type == "N":
            if not isinstance(field, IntegerField):
                yield (
                    "dynamo.E118",
                    (
                        f"{where}: {slot.name!r} is a {type(field).__name__}; as text in a sort "
                        "key it would not sort as a number. Use an IntegerField with a "
                        f"zero-padded width ({{{slot.name}:03d}}), or keep it out of the sort key."
                    ),
                )
            elif not _PADDED.match(slot.spec):
                yield (
                    "dynamo.E118",
                    (
                        f"{where}: {slot.name!r} is a number; in a sort key it sorts as text, so "
                        f"10 would come before 9. Give it a zero-padded width: {{{slot.name}:03d}}."
                    ),
                )
    if sort and template.slots and not template.prefix:
        yield (
            "dynamo.E116",
            (
                f"{where} starts with a field: give it a literal prefix (e.g. "
                f"'{template.attribute.upper()}#{{...}}') so that a query can read this "
                "model's items alone."
            ),
        )


def key_condition(
    meta: Options, schema: TemplateKeySchema, key: list[tuple[str, str, Any]]
) -> tuple[Condition, Condition | None]:
    """``(key condition, filter)`` for lookups the key rules accept (keyrules.py).

    The sort-key condition never leaves the model's prefix, so the Query reads
    this model's items only. ``gt``/``lt`` become the inclusive range that
    DynamoDB's one sort-key condition allows, and the filter (on the field's own
    attribute, which every item also stores) drops the bound itself.
    """
    fields, name = meta.fields_by_name, meta.object_name
    values = {path: value for path, lookup, value in key if lookup == "exact"}
    partition = schema.partition_template
    conditions = [Attr(partition.attribute) == partition.render(values, fields, name)]
    sort, after = schema.sort_template, None
    if sort is not None:
        exact = 0
        while exact < len(sort.slots) and sort.slots[exact].name in values:
            exact += 1
        prefix = sort.render_prefix(values, fields, name, exact)
        ranged = [(p, lookup, v) for p, lookup, v in key if lookup != "exact"]
        at = Attr(sort.attribute)
        if not ranged:
            whole = exact == len(sort.slots)
            conditions.append(at == prefix if whole else at.begins_with(prefix))
        else:
            path, lookup, value = ranged[0]

            def full(v: Any) -> str:
                return sort.render({**values, path: v}, fields, name)

            top = prefix + TOP
            if lookup == "begins_with":
                conditions.append(at.begins_with(prefix + str(value)))
            elif lookup == "between":
                low, high = value
                conditions.append(at.between(full(low), full(high)))
            elif lookup in ("gt", "gte"):
                conditions.append(at.between(full(value), top))
            else:
                conditions.append(at.between(prefix, full(value)))
            if lookup in ("gt", "lt"):
                after = LOOKUPS[lookup](Attr(path), value)
    return all_of(conditions), after  # type: ignore[return-value]
