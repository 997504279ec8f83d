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
    from .templates import KeyTemplate


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
    if schema.templated:
        return template_problems(meta, schema, list(terms))
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


def template_problems(meta: Options, schema: KeySchema, terms: list[Term]) -> list[KeyProblem]:
    """The key rules of a model in a shared table, said in its fields: every field of
    the partition template exactly; on the sort template, exact values for a leading
    run of its fields, and at most one other lookup, on its last field."""
    problems = []
    seen: dict[Field, Term] = {}
    for term in terms:
        problem = _template_term_problem(meta, schema, term, seen)
        if problem is not None:
            problems.append(problem)
        seen.setdefault(term.field, term)
    return [
        *problems,
        *_sort_run_problems(schema, seen),
        *_begins_with_problems(schema, seen),
        *_missing_partition_problems(schema, seen),
    ]


def _template_term_problem(
    meta: Options, schema: KeySchema, term: Term, seen: dict[Field, Term]
) -> KeyProblem | None:
    """One term on its own: a field of a template, named once, with a key lookup."""
    field = term.field
    if term.path != field.name or field not in (*schema.partition_fields, *schema.sort_fields):
        return KeyProblem(
            "dynamo.E203",
            term,
            f"{term.path!r} is not in a key template of {schema.where}.",
            _not_a_key_hint(meta, term.path),
        )
    if field in seen:
        return KeyProblem(
            "dynamo.E205",
            term,
            f"a query takes one condition on {field.name!r} (first: {seen[field].text!r}).",
            "Use one BETWEEN (`__between`) for a range.",
        )
    if term.lookup != "exact" and field in schema.partition_fields:
        return KeyProblem(
            "dynamo.E204",
            term,
            f"{field.name!r} builds the partition key; it takes only an exact value.",
        )
    if term.lookup not in KEY_LOOKUPS:
        return KeyProblem(
            "dynamo.E201",
            term,
            f"not a key condition; a sort key field takes {', '.join(KEY_LOOKUPS)}.",
        )
    return None


def _own_sort_fields(schema: KeySchema) -> list[Field]:
    """The sort template's fields, in order; one of both templates is known from the
    partition key: it fixes nothing more."""
    return [f for f in schema.sort_fields if f not in schema.partition_fields]


def _ranged_terms(schema: KeySchema, seen: dict[Field, Term]) -> list[Term]:
    own = _own_sort_fields(schema)
    return [t for t in seen.values() if t.field in own and t.lookup != "exact"]


def _sort_run_problems(schema: KeySchema, seen: dict[Field, Term]) -> list[KeyProblem]:
    """Exact values for a leading run of the sort template's fields, then at most one
    range, on its last field."""
    sort, own, ranged = schema.sort_fields, _own_sort_fields(schema), _ranged_terms(schema, seen)
    exact = [f for f in own if f in seen and seen[f].lookup == "exact"]
    if exact == own[: len(exact)] and (
        not ranged
        or (len(ranged) == 1 and ranged[0].field is own[len(exact)] and ranged[0].field is sort[-1])
    ):
        return []
    names = ", ".join(f.name for f in sort)
    return [
        KeyProblem(
            "dynamo.E201",
            ranged[0] if ranged else None,
            f"the sort key of {schema.where} is built from {names}, in that order: a query "
            "takes exact values for a leading run of them, and a range or begins_with only "
            "on the last one, after exact values for all the others.",
            "Filter the rest after the read with where().",
        )
    ]


def _begins_with_problems(schema: KeySchema, seen: dict[Field, Term]) -> list[KeyProblem]:
    """begins_with reads the key's text: only a string field written as-is into it."""
    return [
        KeyProblem(
            "dynamo.E206",
            term,
            f"begins_with needs a string field written as-is in the key; "
            f"{term.field.name!r} is not.",
        )
        for term in _ranged_terms(schema, seen)
        if term.lookup == "begins_with"
        and (term.field.key_type != "S" or _slot_spec(schema, term.field.name))
    ]


def _missing_partition_problems(schema: KeySchema, seen: dict[Field, Term]) -> list[KeyProblem]:
    """A Query reads one partition: every field of its template, exactly."""
    missing = [f.name for f in schema.partition_fields if f not in seen]
    if not missing:
        return []
    return [
        KeyProblem(
            "dynamo.E208",
            None,
            f"the query needs {', '.join(map(repr, missing))} with an exact value: they "
            f"build the partition key of {schema.where} (a Query reads one partition).",
            "To read the whole table call .scan() explicitly.",
        )
    ]


def _slot_spec(schema: KeySchema, name: str) -> str:
    template: KeyTemplate = schema.sort_template  # type: ignore[attr-defined]
    return next(s.spec for s in template.slots if s.name == name)


def filter_problems(schema: KeySchema, terms: Iterable[Term]) -> list[KeyProblem]:
    """A query's filter (applied after the read) may not name a key it queries by."""
    keys = set(schema.attribute_fields)
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
        if path in (f.name for f in index.partition_fields):
            return f"{hint}, or query by it with using_index({name!r})."
    return f"{hint}, or declare an index with it as key."
