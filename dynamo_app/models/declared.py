"""Declared queries: named access patterns, checked before the first request.

A query is declared on the model with its key condition written the way
DynamoDB reads it::

    class Reading(models.Model):
        ...
        readings_since = models.DeclaredQuery(
            "sensor = {sensor} AND at >= {since}",
            params={"sensor": str, "since": int},   # optional: checked against the fields
            order="desc",
        )

    Reading.readings_since(sensor="s1", since=10)   # a lazy QuerySet over every page

``returns="page"`` makes the call return one :class:`Page` (``cursor=`` and
``size=`` select it). The declaration is checked when the class is created
and again by ``manage.py check`` (tag ``dynamo``); every problem names the
query and the clause.

Clause grammar (clauses joined by AND; ``{name}`` is a parameter):
``attr = {p}`` (also ``<``, ``<=``, ``>``, ``>=``; ``<>`` in ``where`` only),
``attr BETWEEN {a} AND {b}``, ``begins_with(attr, {p})``; in ``where`` also
``contains(attr, {p})``, ``attribute_exists(attr)``, ``attribute_not_exists(attr)``.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, Self, TypedDict, TypeVar, Unpack, overload

from ..exceptions import ModelDefinitionError
from .keyrules import KeyProblem, Term, filter_problems, key_problems
from .options import Problem

if TYPE_CHECKING:
    from .base import Model
    from .query import Page, QuerySet

M = TypeVar("M", bound="Model")
# What a call returns, to a type checker: Literal["all"] (a QuerySet) or Literal["page"].
Returns = TypeVar("Returns")

_PATH = r"(?P<path>[A-Za-z_][\w.\[\]]*)"
_PARAM = r"\{(?P<p1>[A-Za-z_]\w*)\}"
_PATTERNS = [
    re.compile(rf"^{_PATH}\s+between\s+{_PARAM}\s+and\s+\{{(?P<p2>[A-Za-z_]\w*)\}}$", re.I),
    re.compile(rf"^(?P<fn>begins_with|contains)\s*\(\s*{_PATH}\s*,\s*{_PARAM}\s*\)$", re.I),
    re.compile(rf"^(?P<fn>attribute_exists|attribute_not_exists)\s*\(\s*{_PATH}\s*\)$", re.I),
    re.compile(rf"^{_PATH}\s*(?P<op><>|!=|<=|>=|=|<|>)\s*{_PARAM}$"),
]
_OPERATORS = {"=": "exact", "<>": "ne", "!=": "ne", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}
RESERVED_PARAMS = ("cursor", "size")


@dataclass(frozen=True)
class Clause:
    text: str
    path: str
    lookup: str  # a Django-style lookup: exact, gte, between, begins_with, exists, ...
    params: tuple[str, ...]
    exists: bool = True  # for attribute_exists / attribute_not_exists


def _split(text: str) -> list[str]:
    """Clauses joined by AND, keeping ``x BETWEEN {a} AND {b}`` whole."""
    pieces = [p.strip() for p in re.split(r"\s+and\s+", text.strip(), flags=re.I)]
    out: list[str] = []
    for piece in pieces:
        if out and re.search(r"\sbetween\s+\{\w+\}$", out[-1], re.I):
            out[-1] = f"{out[-1]} AND {piece}"
        else:
            out.append(piece)
    return out


def parse_clause(text: str) -> Clause | None:
    for pattern in _PATTERNS:
        match = pattern.match(text)
        if not match:
            continue
        groups = match.groupdict()
        params = tuple(p for p in (groups.get("p1"), groups.get("p2")) if p)
        fn = (groups.get("fn") or "").lower()
        if fn in ("attribute_exists", "attribute_not_exists"):
            return Clause(text, groups["path"], "exists", (), fn == "attribute_exists")
        if fn:
            return Clause(text, groups["path"], fn, params)
        if "p2" in groups:
            return Clause(text, groups["path"], "between", params)
        return Clause(text, groups["path"], _OPERATORS[groups["op"]], params)
    return None


@functools.cache
def _parse_text(text: str) -> tuple[tuple[Clause, ...], tuple[str, ...]]:
    """The clauses of a declared text and the pieces not understood: parsed once per
    text, not again on every call of the query."""
    clauses: list[Clause] = []
    not_understood: list[str] = []
    for piece in _split(text):
        clause = parse_clause(piece)
        if clause is None:
            not_understood.append(piece)
        else:
            clauses.append(clause)
    return tuple(clauses), tuple(not_understood)


class QueryOptions(TypedDict, total=False):
    """``DeclaredQuery``'s options but ``returns``, for its typed signatures."""

    where: str | None
    index: str | None
    order: str
    page_size: int
    params: dict[str, type] | None
    consistent: bool
    doc: str


class DeclaredQuery(Generic[Returns]):
    """A named query on a model; see the module docstring.

    ``key``: the key condition. ``where``: an optional filter, applied after
    the read. ``index``: a declared index to query. ``order``: "asc" or "desc"
    (sort-key order). ``returns``: "all" (a lazy QuerySet over every page) or
    "page" (one :class:`Page`, of ``page_size`` items by default).
    ``params``: parameter types, checked against how the fields store them.
    """

    @overload
    def __init__(
        self: DeclaredQuery[Literal["all"]],
        key: str,
        *,
        returns: Literal["all"] = "all",
        **options: Unpack[QueryOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: DeclaredQuery[Literal["page"]],
        key: str,
        *,
        returns: Literal["page"],
        **options: Unpack[QueryOptions],
    ) -> None: ...
    def __init__(
        self,
        key: str,
        *,
        where: str | None = None,
        index: str | None = None,
        order: str = "asc",
        returns: str = "all",
        page_size: int = 25,
        params: dict[str, type] | None = None,
        consistent: bool = False,
        doc: str = "",
    ) -> None:
        if order not in ("asc", "desc"):
            raise ModelDefinitionError(f'DeclaredQuery(order={order!r}): use "asc" or "desc".')
        if returns not in ("all", "page"):
            raise ModelDefinitionError(f'DeclaredQuery(returns={returns!r}): use "all" or "page".')
        self.key = key
        self.where = where
        self.index = index
        self.order = order
        self.returns = returns
        self.page_size = page_size
        self.params = dict(params or {})
        self.consistent = consistent
        self.__doc__ = doc or f"Declared query: {key}" + (f" WHERE {where}" if where else "")
        self.model: type[Model] | None = None
        self.name = ""

    def __repr__(self) -> str:
        owner = self.model.__name__ if self.model is not None else "?"
        return f"<DeclaredQuery {owner}.{self.name}: {self.key}>"

    def clone(self) -> Self:
        clone = copy.copy(self)
        clone.model = None
        return clone

    def bind(self, model: type[Model], name: str) -> None:
        self.model = model
        self.name = name

    # --- checks

    def label(self) -> str:
        """``Model.query_name``, for messages."""
        return f"{self.model.__name__}.{self.name}"  # type: ignore[union-attr]

    def _clause_problem(
        self, id: str, clause: Clause | str, message: str, hint: str = ""
    ) -> Problem:
        text = clause.text if isinstance(clause, Clause) else clause
        return Problem(id, f"{self.label()}: clause {text!r}: {message}", hint)

    def _parse(self, text: str, problems: list[Problem]) -> list[Clause]:
        clauses, not_understood = _parse_text(text)
        for piece in not_understood:
            problems.append(
                self._clause_problem(
                    "dynamo.E201",
                    piece,
                    "not understood.",
                    "Write `attr = {param}` (or <, <=, >, >=), `attr BETWEEN {a} AND {b}` "
                    "or `begins_with(attr, {param})`, joined by AND.",
                )
            )
        return list(clauses)

    def problems(self) -> list[Problem]:
        """Every problem of this declaration, each naming the query and the clause."""
        meta = self.model._meta  # type: ignore[union-attr]
        problems: list[Problem] = []
        schema = meta.indexes.get(self.index) if self.index else meta.table()
        if schema is None:
            problems.append(
                Problem(
                    "dynamo.E209",
                    f"{self.label()}: index {self.index!r} is not declared in "
                    f"{meta.object_name}.Meta.indexes "
                    f"(declared: {', '.join(meta.indexes) or 'none'}).",
                )
            )
        key_clauses = self._parse(self.key, problems)
        where_clauses = self._parse(self.where, problems) if self.where else []
        fields: dict[str, Any] = {}
        for clause in [*key_clauses, *where_clauses]:
            field = meta.fields_by_name.get(clause.path.split(".")[0].split("[")[0])
            if field is None:
                problems.append(
                    self._clause_problem(
                        "dynamo.E202",
                        clause,
                        f"{meta.object_name} has no field {clause.path!r}.",
                        f"Fields: {', '.join(meta.fields_by_name)}.",
                    )
                )
            fields[clause.text] = field
        if schema is not None:
            problems += self._check_key(key_clauses, fields, schema)
            problems += self._check_where(where_clauses, fields, schema)
        problems += self._check_params([*key_clauses, *where_clauses], fields)
        return problems

    def _check_key(
        self, clauses: list[Clause], fields: dict[str, Any], schema: Any
    ) -> list[Problem]:
        meta = self.model._meta  # type: ignore[union-attr]
        problems = [self._problem(p) for p in key_problems(meta, schema, _terms(clauses, fields))]
        if self.order == "desc" and len(schema.attributes) < 2:
            problems.append(
                Problem(
                    "dynamo.E213",
                    f"{self.label()}: order='desc' needs a sort key, and {schema.where} has none.",
                )
            )
        return problems

    def _check_where(
        self, clauses: list[Clause], fields: dict[str, Any], schema: Any
    ) -> list[Problem]:
        return [self._problem(p) for p in filter_problems(schema, _terms(clauses, fields))]

    def _problem(self, problem: KeyProblem) -> Problem:
        if problem.term is None:
            return Problem(
                problem.id, f"{self.label()}: key {self.key!r}: {problem.message}", problem.hint
            )
        return self._clause_problem(problem.id, problem.term.text, problem.message, problem.hint)

    def _check_params(self, clauses: list[Clause], fields: dict[str, Any]) -> list[Problem]:
        """Every declared parameter used, none named as a paging one, each of a type
        its clause's field takes."""
        problems = []
        used = {p for clause in clauses for p in clause.params}
        for name in self.params:
            if name not in used:
                problems.append(
                    Problem(
                        "dynamo.E212",
                        f"{self.label()}: parameter {name!r} is declared but no clause uses it.",
                    )
                )
        if self.returns == "page":
            for name in sorted(used & set(RESERVED_PARAMS)):
                problems.append(
                    Problem(
                        "dynamo.E212",
                        f"{self.label()}: parameter {name!r} is reserved for paging; rename it.",
                    )
                )
        for clause in clauses:
            problems += self._check_param_types(clause, fields[clause.text])
        return problems

    def _check_param_types(self, clause: Clause, field: Any) -> list[Problem]:
        """The declared type of each parameter of a clause on a whole field is one the
        field takes (``begins_with``: a string; ``contains`` on a set: anything)."""
        if field is None or "." in clause.path or "[" in clause.path:
            return []
        if clause.lookup == "contains" and field.is_set:
            return []
        expected = (str,) if clause.lookup == "begins_with" else field.python_types
        problems = []
        for param in clause.params:
            kind = self.params.get(param)
            if kind is None:
                continue
            bad = not isinstance(kind, type) or not issubclass(kind, expected)
            # A subclass that is another field's value: a bool is an int (and refused
            # wherever bool is not named), a datetime a date (refused by a date field).
            if (
                bad
                or (kind is bool and bool not in expected)
                or (kind is datetime and date in expected and datetime not in expected)
            ):
                names = " or ".join(t.__name__ for t in expected)
                problems.append(
                    self._clause_problem(
                        "dynamo.E207",
                        clause,
                        f"parameter {param!r} is declared as "
                        f"{getattr(kind, '__name__', kind)}, but {field.label} is a "
                        f"{type(field).__name__} (stored as {field.wire_type}) that takes "
                        f"{names}.",
                    )
                )
        return problems

    # --- calling

    @overload
    def __get__(
        self: DeclaredQuery[Literal["all"]], instance: object, owner: type[M]
    ) -> Callable[..., QuerySet[M]]: ...
    @overload
    def __get__(
        self: DeclaredQuery[Literal["page"]], instance: object, owner: type[M]
    ) -> Callable[..., Page[M]]: ...
    def __get__(self, instance: object, owner: type[Model]) -> Callable[..., Any]:
        def run(**kwargs: Any) -> QuerySet[Any] | Page[Any]:
            return self.run(**kwargs)

        run.__name__ = self.name
        run.__doc__ = self.__doc__
        return run

    def run(self, **kwargs: Any) -> QuerySet[Any] | Page[Any]:
        """Build the QuerySet (``returns="all"``) or fetch the Page (``returns="page"``)."""
        paging = {k: kwargs.pop(k) for k in RESERVED_PARAMS if k in kwargs}
        if paging and self.returns != "page":
            raise TypeError(f"{self.label()}() returns every page; it takes no cursor or size.")
        problems: list[Problem] = []
        key = self._parse(self.key, problems)
        where = self._parse(self.where, problems) if self.where else []
        needed = {p for clause in [*key, *where] for p in clause.params}
        if set(kwargs) != needed:
            missing = ", ".join(sorted(needed - set(kwargs))) or "none"
            extra = ", ".join(sorted(set(kwargs) - needed)) or "none"
            raise TypeError(
                f"{self.label()}() takes {', '.join(sorted(needed))}; missing: {missing}, "
                f"unexpected: {extra}."
            )
        qs = self.model.objects.get_queryset()  # type: ignore[union-attr]
        if self.index:
            qs = qs.using_index(self.index)
        qs = qs.filter(**dict(_lookup(c, kwargs) for c in key))
        if where:
            qs = qs.where(**dict(_lookup(c, kwargs) for c in where))
        if self.order == "desc":
            sort = self.model._meta.key_schema(self.index).sort  # type: ignore[union-attr]
            assert sort is not None  # a model whose desc query has no sort key fails E213
            qs = qs.order_by(f"-{sort.name}")
        if self.consistent:
            qs = qs.consistent()
        if self.returns == "page":
            return qs.page(size=paging.get("size", self.page_size), cursor=paging.get("cursor"))
        return qs


def _lookup(clause: Clause, values: dict[str, Any]) -> tuple[str, Any]:
    name = f"{clause.path}__{clause.lookup}"
    if clause.lookup == "exists":
        return name, clause.exists
    if clause.lookup == "between":
        return name, (values[clause.params[0]], values[clause.params[1]])
    return name, values[clause.params[0]]


def _terms(clauses: list[Clause], fields: dict[str, Any]) -> list[Term]:
    """The clauses on fields of the model (a clause on no field is dynamo.E202)."""
    return [Term(c.text, c.path, fields[c.text], c.lookup) for c in clauses if fields[c.text]]
