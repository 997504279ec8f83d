"""The rules of a key condition, one set for ``filter()`` and declared queries.

A Query reads one partition: equality on the partition key, at most one
condition on the sort key (one of ``KEY_LOOKUPS``; ``begins_with`` only on a
string), nothing on other attributes; and its filter may not name the keys
it queries by (DynamoDB refuses both). ``QuerySet`` raises the first problem
as ``QueryError`` before sending; ``DeclaredQuery`` reports every one when the
class is created. A problem names the condition as its caller wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..expressions import KEY_LOOKUPS

if TYPE_CHECKING:
    from .fields import Field
    from .options import KeySchema, Options


@dataclass(frozen=True)
class Term:
    """One condition on an attribute: ``text`` as written (``at__gt``, ``at > {a}``)."""

    text: str
    path: str
    field: Field
    lookup: str


@dataclass(frozen=True)
class KeyProblem:
    """A broken rule: its check id, the term it is about (None: the whole condition)."""

    id: str
    term: Term | None
    message: str
    hint: str = ""


def key_problems(meta: Options, schema: KeySchema, terms: Iterable[Term]) -> list[KeyProblem]:
    """What makes ``terms`` (ANDed) no key condition of ``schema``, in their order."""
    problems = []
    partition: Term | None = None
    sort: Term | None = None
    for term in terms:
        field = term.field
        if field is schema.partition and term.path == field.name:
            if term.lookup != "exact":
                problems.append(
                    KeyProblem(
                        "dynamo.E204",
                        term,
                        f"the partition key {field.name!r} takes only an exact value "
                        f"(`{field.name} = ...`).",
                    )
                )
            partition = term
        elif field is schema.sort and term.path == field.name:
            if sort is not None:
                problems.append(
                    KeyProblem(
                        "dynamo.E205",
                        term,
                        f"a query takes one condition on the sort key {field.name!r} (first: "
                        f"{sort.text!r}).",
                        "Use one BETWEEN (`__between`) for a range.",
                    )
                )
            sort = term
            if term.lookup not in KEY_LOOKUPS:
                problems.append(
                    KeyProblem(
                        "dynamo.E201",
                        term,
                        f"not a key condition; the sort key takes {', '.join(KEY_LOOKUPS)} "
                        "(=, <, <=, >, >=, BETWEEN, begins_with).",
                    )
                )
            elif term.lookup == "begins_with" and field.key_type != "S":
                problems.append(
                    KeyProblem(
                        "dynamo.E206",
                        term,
                        f"begins_with needs a string sort key; {field.name!r} is stored as "
                        f"{field.key_type}.",
                    )
                )
        else:
            problems.append(
                KeyProblem(
                    "dynamo.E203",
                    term,
                    f"{term.path!r} is not a key attribute of {schema.where}.",
                    _not_a_key_hint(meta, term.path),
                )
            )
    if partition is None:
        name = schema.partition.name
        problems.append(
            KeyProblem(
                "dynamo.E208",
                None,
                f"the query needs the partition key {name!r} of {schema.where} with an exact "
                "value (a Query reads one partition).",
                f"Add `{name} = ...`. To find items by other attributes declare a GlobalIndex "
                "and query it; to read the whole table call .scan() explicitly.",
            )
        )
    return problems


def filter_problems(schema: KeySchema, terms: Iterable[Term]) -> list[KeyProblem]:
    """A query's filter (applied after the read) may not name a key it queries by."""
    keys = set(schema.fields)
    return [
        KeyProblem(
            "dynamo.E210",
            term,
            f"{term.field.name!r} is a key attribute of {schema.where}; DynamoDB does not "
            "filter on the keys a query reads by.",
            "Put the condition in the key condition (filter() or the key text).",
        )
        for term in terms
        if term.field in keys
    ]


def _not_a_key_hint(meta: Options, path: str) -> str:
    hint = f"Filter it after the read (where({path}=...))"
    for name, index in meta.indexes.items():
        if index.partition.name == path:
            return f"{hint}, or query by it with using_index({name!r})."
    return f"{hint}, or declare an index with it as key."
