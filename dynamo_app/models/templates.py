r"""Key templates: how a model in a shared table builds its stored key attributes.

``"PLAYER#{uniform_number:03d}"`` is literal text and fields, written with
Python's format syntax. A template renders to a string (every key attribute
of a shared table is of type S), and string order is byte order: so a number
in a sort key needs a zero-padded width (``03d``) to sort as numbers do, and
a value that would not fit that width is refused when it is written, never
stored out of order.

A key reads back: no two different sets of field values render the same text.
Every field but the template's last is followed by literal text (or is a
padded number, of fixed width), and in its value the escape character ``\``
and each character that starts such a literal (``#`` in ``"{day}#{slot}"``)
are written after a ``\``: ``day="mon#am"`` is ``mon\#am``, so it never
meets ``day="mon", slot="am#..."``. The last field is written as it is (it runs
to the end, so it needs no escaping, and a range on it sorts as its values
do); a value without those characters is written as it always was.

A query names fields, never the stored attributes: ``filter(team_id=...)``
becomes the rendered partition key, and sort-key lookups become conditions on
the rendered sort key, always kept inside the model's literal prefix so that
another entity's items in the same partition are never read.
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..exceptions import StoredValueError, ValidationError
from ..expressions import LOOKUPS, Attr, Condition, all_of
from .fields import IntegerField

if TYPE_CHECKING:
    from .fields import Field
    from .options import Options, TemplateKeySchema

# The highest code point: every string that starts with a prefix sorts before
# prefix + this (DynamoDB compares strings by their UTF-8 bytes, as Python does by code point).
TOP = "\U0010ffff"
_PADDED = re.compile(r"^0(\d+)d$")
ESCAPE = "\\"


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
        # What a field's value may not hold as it is (see the module docstring).
        self.escaped = frozenset(
            [ESCAPE, *(slot.after[0] for slot in self.slots[:-1] if slot.after)]
        )

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
        last = len(self.slots) - 1
        for i, slot in enumerate(self.slots[:n]):
            text = render_value(fields[slot.name], values[slot.name], slot.spec, model)
            out.append(text if i == last else escape(text, self.escaped))
            out.append(slot.after)
        return "".join(out)

    @property
    def delimited_names(self) -> tuple[str, ...]:
        """The fields whose text ends where the literal after them starts: all but the
        last, save padded numbers (of fixed width). An item stored before values were
        escaped may hold ``#`` in one of them, and so match another value's key."""
        return tuple(s.name for s in self.slots[:-1] if not _PADDED.match(s.spec))

    def can_share_keys_with(self, other: KeyTemplate) -> bool:
        """Whether the two templates could render the same text: only when one's
        literal prefix starts the other's (disjoint prefixes never meet)."""
        a, b = self.prefix, other.prefix
        return a.startswith(b) or b.startswith(a)


def escape(text: str, chars: frozenset[str]) -> str:
    """``text`` with each of ``chars`` written after the escape character."""
    if not any(c in text for c in chars):
        return text
    return "".join(ESCAPE + c if c in chars else c for c in text)


def render_value(field: Field, value: Any, spec: str, model: str) -> str:
    """One field's text in a key: its stored text, or ``format(value, spec)``; a
    padded number must fit its width and not be negative (else sort order breaks),
    and a formatted value must read back as itself (else two values share a key)."""
    if value is None:
        raise field.invalid(value, f"{field.description} (it is part of a key)")
    encoded = field.encode(value)
    ((kind, text),) = encoded.items()  # type: ignore[union-attr]
    if not spec:
        return str(text)
    try:
        formatted = format(value, spec)
    except (ValueError, TypeError) as exc:
        raise field.invalid(value, f"a value the key format {spec!r} takes ({exc})") from None
    padded = _PADDED.match(spec)
    if padded and len(formatted) == int(padded.group(1)) and not formatted.startswith("-"):
        return formatted  # digits of a fixed width: they read back
    if padded:
        raise ValidationError(
            f"{model}.{field.name}={value!r} does not fit the key format {spec!r} (a number "
            f"from 0 to {'9' * int(padded.group(1))}): stored, it would sort out of order. "
            "Widen the format in Meta.keys.",
            model=model,
            field=field.name,
        )
    if not _reads_back(field, kind, formatted, text):
        raise field.invalid(
            value, f"a value the key format {spec!r} writes whole ({formatted!r} loses part of it)"
        )
    return formatted


def _reads_back(field: Field, kind: str, formatted: str, stored: Any) -> bool:
    """Whether ``formatted`` decodes to the value stored as ``stored`` (both of ``kind``)."""
    try:
        return bool(field.decode_slow({kind: formatted}) == field.decode_slow({kind: stored}))
    except StoredValueError:  # text the field cannot read at all
        return False


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
    for slot, following in itertools.pairwise(template.slots):
        if slot.after.startswith(ESCAPE):
            yield (
                "dynamo.E116",
                f"{where}: the text after {{{slot.name}}} starts with {ESCAPE!r}, the escape "
                "character of key values; start it with another character (e.g. '#').",
            )
        elif not slot.after and not _PADDED.match(slot.spec):
            yield (
                "dynamo.E116",
                f"{where}: {{{slot.name}}} is followed by {{{following.name}}} directly, so "
                "two different values could render the same key; put literal text between "
                f"them (e.g. '{{{slot.name}}}#{{{following.name}}}').",
            )
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
    attribute, which every item also stores) drops the bound itself. An exact value
    of a delimited field is filtered on too (where the index holds the field): an
    item whose key was rendered before values were escaped may match the key text,
    never the field.
    """
    values = {path: value for path, lookup, value in key if lookup == "exact"}
    partition = schema.partition_template
    conditions = [Attr(partition.attribute) == meta.render(partition, values)]  # size-checked
    after = None
    if schema.sort_template is not None:
        sort_condition, after = _sort_condition(meta, schema.sort_template, values, key)
        conditions.append(sort_condition)
    filters = _delimited_filters(meta, schema, values)
    if after is not None:
        filters.append(after)
    return all_of(conditions), all_of(filters)  # type: ignore[return-value]


def _sort_condition(
    meta: Options, sort: KeyTemplate, values: dict[str, Any], key: list[tuple[str, str, Any]]
) -> tuple[Condition, Condition | None]:
    """The sort key's condition within the model's prefix, and the filter that drops
    the bound of a ``gt``/``lt`` (DynamoDB's ranges include it)."""
    fields, name = meta.fields_by_name, meta.object_name
    exact = 0
    while exact < len(sort.slots) and sort.slots[exact].name in values:
        exact += 1
    prefix = sort.render_prefix(values, fields, name, exact)
    ranged = [(p, lookup, v) for p, lookup, v in key if lookup != "exact"]
    at = Attr(sort.attribute)
    if not ranged:
        whole = exact == len(sort.slots)
        return (at == prefix if whole else at.begins_with(prefix)), None
    path, lookup, value = ranged[0]

    def full(v: Any) -> str:
        return sort.render({**values, path: v}, fields, name)

    if lookup == "begins_with":
        condition = at.begins_with(prefix + str(value))
    elif lookup == "between":
        low, high = value
        condition = at.between(full(low), full(high))
    elif lookup in ("gt", "gte"):
        condition = at.between(full(value), prefix + TOP)
    else:
        condition = at.between(prefix, full(value))
    return condition, LOOKUPS[lookup](Attr(path), value) if lookup in ("gt", "lt") else None


def _delimited_filters(
    meta: Options, schema: TemplateKeySchema, values: dict[str, Any]
) -> list[Condition]:
    """An exact value of a delimited field, filtered on its own attribute too, where
    the schema's items hold it (an index that does not could match nothing)."""
    projection, fields = schema.projection, meta.fields_by_name
    templates = (schema.partition_template, schema.sort_template)
    return [
        Attr(n) == values[n]
        for t in templates
        if t is not None
        for n in t.delimited_names
        if n in values
        and (projection == "ALL" or (n in projection or fields[n].db_name in projection))
    ]
