"""PartiQL statements, in the app's style: tables resolved, values encoded, no silent scan.

``Player.objects.partiql(statement, parameters)`` and ``execute(...)`` send one
``ExecuteStatement``; ``execute_transaction([...])`` one ``ExecuteTransaction``.
Before anything is sent, a statement is read token by token (``prepare``):

* Tables are named by placeholders, resolved to deployed names and quoted as
  PartiQL identifiers: ``{table}`` (the manager's model), ``{Player}`` (a
  model's class name, when only one registered model has it) or
  ``{app_label.Player}`` / ``{module.path.Player}``. A table written out by
  hand (``FROM "test-player"``) is refused: it would bypass TABLE_PREFIX,
  TABLE_NAMES and TABLE_RESOLVER.
* Values are parameters (``?``), never text of the statement: a string literal
  is refused (the mark of a value formatted in), except a key of INSERT's
  ``{'attribute': ?}``. Each parameter is encoded by the model's field when the
  attribute it meets can be told (``a = ?``, ``? < a``, ``a BETWEEN ? AND ?``,
  ``a IN [?, ?]``, ``begins_with(a, ?)``, ``contains(a, ?)``, INSERT's
  ``'a': ?``), else by the generic codec (``dynamo_app.client.wire``).
* INSERT, UPDATE and DELETE are refused on a model with unique constraints
  or a VersionField: they would bypass its locks and versions. Through a model
  of a shared table they touch only its items: the table key given by
  parameters its templates render, and an INSERT's entity type its own.
* A SELECT on a model in a shared table returns that model's items only, by the
  rule ``filter()`` and ``scan()`` follow (``models.query.own_items``): another
  entity's item is skipped (its entity type attribute is added to a projection
  that leaves it out, so it can be told).
* A SELECT must have an equality (``=`` or ``IN``) on the partition key of its
  table or index among the AND-ed terms at the top of its WHERE clause, or the
  call must say ``scan=True``: PartiQL turns any other SELECT into a Scan of
  the whole table. The check reads the clause's shape, not its meaning; where
  it cannot be sure (an OR, a NOT, a key compared inside a function), it
  refuses and names ``scan=True``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from django.utils.translation import ngettext

from .client import wire
from .client.handle import get_handle
from .exceptions import QueryError
from .models.query import own_items
from .models.registry import registered_models

if TYPE_CHECKING:
    from .models.base import Model
    from .models.options import Options

__all__ = ["Result", "Statement", "execute", "execute_transaction", "prepare"]

M = TypeVar("M", bound="Model")

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
    |(?P<string>'(?:[^']|'')*')
    |(?P<quoted>"(?:[^"]|"")*")
    |(?P<table>\{\s*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\s*\})
    |(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    |(?P<word>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<param>\?)
    |(?P<op><>|!=|<=|>=|=|<|>)
    |(?P<punct><<|>>|\|\||[()\[\],.:*+\-/{}])
    """,
    re.VERBOSE,
)
_KINDS = ("SELECT", "INSERT", "UPDATE", "DELETE", "EXISTS")
_TABLE_BEFORE = {"FROM", "INTO", "UPDATE"}  # the word before a statement's table
_FUNCTIONS = {"BEGINS_WITH": "value", "CONTAINS": "element"}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    start: int
    end: int

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else ""

    def attribute(self) -> str | None:
        """The attribute name this token is, if it is one."""
        if self.kind == "word":
            return self.text
        if self.kind == "quoted":
            return self.text[1:-1].replace('""', '"')
        return None


def _tokens(text: str) -> list[_Token]:
    tokens, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise QueryError(f"PartiQL statement: unexpected {text[at]!r} at {at}: {text!r}")
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(_Token(kind, match.group(), match.start(), match.end()))
        at = match.end()
    return tokens


@dataclass(frozen=True)
class Statement:
    """A statement ready to send: text with deployed table names, wire parameters,
    and the model whose items it reads or writes."""

    model: type[Model]
    text: str
    parameters: list[dict[str, Any]]
    kind: str  # SELECT, INSERT, UPDATE, DELETE or EXISTS
    partial: bool  # returns only some attributes: instances refuse a whole-item save()

    def request(self) -> dict[str, Any]:
        request: dict[str, Any] = {"Statement": self.text}
        if self.parameters:
            request["Parameters"] = self.parameters
        return request


def prepare(
    text: str,
    parameters: Sequence[Any] = (),
    *,
    model: type[Model] | None = None,
    scan: bool = False,
) -> Statement:
    """Check ``text`` and resolve its tables and parameters (see the module docstring).
    ``model`` is what ``{table}`` stands for."""
    tokens = _tokens(text)
    kind = tokens[0].upper if tokens else ""
    if kind not in _KINDS:
        raise QueryError(
            f"PartiQL statement must start with {', '.join(_KINDS)}; got {text[:40]!r}."
        )
    target = _table(tokens, text, model)
    meta = target.model._meta
    if kind in ("INSERT", "UPDATE", "DELETE"):
        _refuse_bypassed_guards(meta, kind)
    params = list(parameters)
    slots = [i for i, t in enumerate(tokens) if t.kind == "param"]
    _check_parameter_count(text, slots, params)
    _refuse_literals(tokens, text)
    depth = _struct_depths(tokens)
    encoded = [
        _encode(target.model, tokens, i, depth, v) for i, v in zip(slots, params, strict=True)
    ]
    if kind in ("INSERT", "UPDATE", "DELETE") and meta.shared is not None:
        _check_own_items(target.model, kind, tokens, slots, depth, encoded)
    if kind == "SELECT" and not scan:
        _require_key_equality(meta, target, tokens, text)
    text = target.text
    if kind == "SELECT" and meta.shared is not None and tokens[1].text != "*":
        text = _with_entity_type(meta, tokens, text)
    return Statement(
        model=target.model,
        text=text,
        parameters=encoded,
        kind=kind,
        partial=_partial(tokens, kind, target),
    )


def _refuse_bypassed_guards(meta: Options, kind: str) -> None:
    """A PartiQL write claims no unique lock and checks no version: refused where
    the model has either."""
    if meta.unique or meta.version is not None:
        guard = "unique constraints" if meta.unique else "a VersionField"
        raise QueryError(
            f"{meta.object_name} declares {guard}: a PartiQL {kind} would bypass them (no "
            "lock claimed or released, no version checked or bumped). Write it with "
            "objects.create(), save(), update() or delete() (or in a transaction()), "
            "which keep them."
        )


def _check_parameter_count(text: str, slots: list[int], params: list[Any]) -> None:
    if len(slots) != len(params):
        slot_text = ngettext("%(n)d parameter", "%(n)d parameters", len(slots))
        given = ngettext("%(n)d value was given", "%(n)d values were given", len(params))
        raise QueryError(
            f"PartiQL statement has {slot_text % {'n': len(slots)}} (?) but "
            f"{given % {'n': len(params)}}: {text!r}"
        )


def _require_key_equality(meta: Options, target: _Target, tokens: list[_Token], text: str) -> None:
    """A SELECT names its partition key with = or IN, else DynamoDB scans the table."""
    key = meta.key_schema(target.index).attributes[0]
    if not _has_key_equality(_where(tokens), key):
        where = f"index {target.index!r}" if target.index else "the table"
        raise QueryError(
            f"{meta.object_name}: this SELECT has no equality (= or IN) on the partition key "
            f"{key!r} of {where} among the AND-ed terms of its WHERE clause, so DynamoDB "
            "would scan the whole table. Add one, or pass scan=True to read the whole table "
            f"on purpose: {text!r}"
        )


def _with_entity_type(meta: Options, tokens: list[_Token], text: str) -> str:
    """A SELECT's projection with the entity type, to tell this model's items from
    others' (own_items); the projection comes before the table, so its place in
    ``text`` is unmoved. A name with a leading underscore (the default _type) is no
    reserved word and goes unquoted, which moto reads too (it projects nothing for
    a quoted one)."""
    name = meta.shared.type_attribute  # type: ignore[union-attr]
    name = name if re.fullmatch(r"_\w*", name, re.ASCII) else f'"{name}"'
    return f"{text[: tokens[1].start]}{name}, {text[tokens[1].start :]}"


@dataclass(frozen=True)
class _Target:
    model: type[Model]
    index: str | None
    text: str  # the statement with its placeholder replaced


def _table(tokens: list[_Token], text: str, bound: type[Model] | None) -> _Target:
    """The statement's one table, from its placeholder (refusing a table named by hand)."""
    places = [i for i, t in enumerate(tokens) if t.kind == "table"]
    for i, token in enumerate(tokens[:-1]):
        after = tokens[i + 1]
        if token.upper in _TABLE_BEFORE and after.kind in ("word", "quoted"):
            if token.upper == "UPDATE" and i != 0:
                continue
            raise QueryError(
                f"PartiQL statement names table {after.text} itself: write {{table}} (the "
                "manager's model) or {ModelName}, so the deployed name is resolved with "
                f"TABLE_PREFIX / TABLE_NAMES / TABLE_RESOLVER: {text!r}"
            )
    for i in places:
        if not i or tokens[i - 1].upper not in _TABLE_BEFORE:
            raise QueryError(
                f"PartiQL statement: {tokens[i].text} stands where no table goes (a statement "
                "names one table, after FROM, INTO or UPDATE); values are parameters (?), "
                f"never formatted in: {text!r}"
            )
    if len(places) != 1:
        raise QueryError(
            f"PartiQL statement needs exactly one table placeholder ({{table}} or {{ModelName}}), "
            f"found {len(places)}: {text!r}"
        )
    at = places[0]
    name = tokens[at].text[1:-1].strip()
    model = _model(name, bound, text)
    index = None
    if at + 2 < len(tokens) and tokens[at + 1].text == ".":
        index = tokens[at + 2].attribute()
        if index is None:
            raise QueryError(f"PartiQL statement: expected an index name after {{{name}}}.")
        model._meta.key_schema(index)  # a QueryError naming the model's indexes
    deployed = get_handle().table_name(model._meta.table_name)
    start, end = tokens[at].start, tokens[at].end
    return _Target(model, index, f'{text[:start]}"{deployed}"{text[end:]}')


def _model(name: str, bound: type[Model] | None, text: str) -> type[Model]:
    """The model a placeholder names."""
    if name == "table":
        if bound is None:
            raise QueryError(
                "{table} means the manager's model: use Model.objects.partiql(...), or name "
                f"the model here ({{ModelName}} or {{app_label.ModelName}}): {text!r}"
            )
        return bound
    from django.apps import apps

    def labels(model: type[Model]) -> set[str]:
        config = apps.get_containing_app_config(model.__module__)
        names = {model.__name__, model._meta.label}
        if config is not None:
            names.add(f"{config.label}.{model.__name__}")
        return names

    found = [m for m in registered_models() if name in labels(m)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise QueryError(
            f"PartiQL statement: {{{name}}} names no registered model (write {{table}}, "
            f"{{ModelName}}, {{app_label.ModelName}} or {{module.ModelName}}): {text!r}"
        )
    raise QueryError(
        f"PartiQL statement: {{{name}}} is ambiguous ({', '.join(m._meta.label for m in found)}); "
        "write {app_label.ModelName} or {module.ModelName}."
    )


def _struct_depths(tokens: list[_Token]) -> list[int]:
    """For each token, how many ``{...}`` struct literals it is inside."""
    depths, depth = [], 0
    for token in tokens:
        if token.text == "}":
            depth -= 1
        depths.append(depth)
        if token.text == "{":
            depth += 1
    return depths


def _refuse_literals(tokens: list[_Token], text: str) -> None:
    for i, token in enumerate(tokens):
        key = (
            i + 1 < len(tokens)
            and tokens[i + 1].text == ":"
            and i
            and tokens[i - 1].text in ("{", ",")
        )
        if token.kind == "string" and not key:
            raise QueryError(
                f"PartiQL statement has the value {token.text} written into it: pass values as "
                f"parameters (?) so they are encoded by the model's fields and never formatted "
                f"into the statement: {text!r}"
            )
        if token.text == "{" and (i + 1 >= len(tokens) or tokens[i + 1].kind != "string"):
            if tokens[i + 1 : i + 2] and tokens[i + 1].text == "}":
                continue  # an empty struct
            raise QueryError(
                f"PartiQL statement has a stray {{ at {token.start}: placeholders are {{table}}, "
                f"{{ModelName}} or {{app_label.ModelName}}, and values are parameters (?): {text!r}"
            )


def _path_at(tokens: list[_Token], i: int) -> str | None:
    """The attribute at ``tokens[i]`` when it is a whole top-level name (not part of
    a path such as ``a.b`` or ``a[0]``, not a function's name)."""
    if not 0 <= i < len(tokens):
        return None
    name = tokens[i].attribute()
    if name is None or tokens[i].upper in ("AND", "OR", "NOT", "BETWEEN", "IN", "WHERE", "SET"):
        return None
    before = tokens[i - 1].text if i else ""
    after = tokens[i + 1].text if i + 1 < len(tokens) else ""
    if before in (".", "]") or after in (".", "[", "("):
        return None
    return name


def _attribute_of(tokens: list[_Token], i: int, depth: list[int]) -> tuple[str | None, str]:
    """The attribute the parameter ``tokens[i]`` is compared with or assigned to, and
    how it is encoded there (``value`` or ``element``)."""
    for place in (_compared, _listed, _function_argument):
        found = place(tokens, i, depth)
        if found is not None:
            return found
    return None, "value"


def _compared(tokens: list[_Token], i: int, depth: list[int]) -> tuple[str | None, str] | None:
    """Beside an operator, an INSERT's ``'a': ?`` or in a BETWEEN: the attribute on its
    other side (None when that is no plain attribute)."""
    prev = tokens[i - 1] if i else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if prev is not None and prev.kind == "op":
        return _path_at(tokens, i - 2), "value"
    if prev is not None and prev.text == ":" and depth[i] == 1 and tokens[i - 2].kind == "string":
        return tokens[i - 2].text[1:-1].replace("''", "'"), "value"  # INSERT's 'a': ?
    if nxt is not None and nxt.kind == "op":
        return _path_at(tokens, i + 2), "value"
    if prev is not None and prev.upper == "BETWEEN":
        return _path_at(tokens, i - 2), "value"
    if prev is not None and prev.upper == "AND" and tokens[i - 3].upper == "BETWEEN":
        return _path_at(tokens, i - 4), "value"
    return None


def _listed(tokens: list[_Token], i: int, depth: list[int]) -> tuple[str | None, str] | None:
    """In the list of an ``IN [?, ?]``: the attribute before the IN."""
    j = i - 1
    while j >= 0 and (tokens[j].kind == "param" or tokens[j].text == ","):
        j -= 1
    if j >= 1 and tokens[j].text in ("[", "(") and tokens[j - 1].upper == "IN":
        return _path_at(tokens, j - 2), "value"
    return None


def _function_argument(
    tokens: list[_Token], i: int, depth: list[int]
) -> tuple[str | None, str] | None:
    """The second argument of a function of an attribute (``contains(a, ?)``): that
    attribute, encoded as the function takes it."""
    prev = tokens[i - 1] if i else None
    if prev is not None and prev.text == "," and i >= 4 and tokens[i - 3].text == "(":
        function = tokens[i - 4].upper
        if function in _FUNCTIONS and tokens[i - 2].attribute() is not None:
            return tokens[i - 2].attribute(), _FUNCTIONS[function]
    return None


def _encode(
    model: type[Model], tokens: list[_Token], i: int, depth: list[int], value: Any
) -> dict[str, Any]:
    """One parameter in wire form: by the field of the attribute it meets, else generically."""
    meta = model._meta
    name, kind = _attribute_of(tokens, i, depth)
    field = meta.fields_by_db_name.get(name) if name is not None else None
    if field is not None:
        return meta.encode_operand(field.name, value, kind)
    try:
        return wire.encode(value)
    except wire.WireError as exc:
        raise QueryError(f"{meta.object_name}: parameter {value!r}: {exc}.") from None


def _check_own_items(
    model: type[Model],
    kind: str,
    tokens: list[_Token],
    slots: list[int],
    depth: list[int],
    encoded: list[dict[str, Any]],
) -> None:
    """A write through a model of a shared table touches that model's items only: the
    table key is given by parameters that its templates render (their literal prefixes
    tell the models of a table apart, dynamo.E117), and an INSERT names its entity
    type. Else a write through a model without unique constraints could change or
    delete another model's item and bypass its locks."""
    meta = model._meta
    assert meta.shared is not None
    where = len(tokens) - len(_where(tokens)) if kind != "INSERT" else 0
    given = {
        name: value
        for i, value in zip(slots, encoded, strict=True)
        if i >= where and (name := _attribute_of(tokens, i, depth)[0]) is not None
    }
    wanted = {a: meta.templates[a] for a in meta.key_attributes}
    for attribute, template in wanted.items():
        text = given.get(attribute, {}).get("S")
        owned = text is not None and (
            text.startswith(template.prefix) if template.slots else text == template.prefix
        )
        if not owned:
            got = "no parameter" if text is None else f"{text[:80]!r}"
            raise QueryError(
                f"{meta.object_name} shares table {meta.table_name!r}: a PartiQL {kind} through "
                f"it may touch only its own items, so it needs {attribute} = ? with a key its "
                f"template {template.text!r} renders ({got}). Write another model's items "
                "through that model."
            )
    kind_attribute = meta.shared.type_attribute
    if kind == "INSERT" and given.get(kind_attribute) != {"S": meta.entity}:
        raise QueryError(
            f"{meta.object_name} shares table {meta.table_name!r}: a PartiQL INSERT through it "
            f"needs '{kind_attribute}': ? with the value {meta.entity!r} (the item's model)."
        )


def _where(tokens: list[_Token]) -> list[_Token]:
    """The tokens of a SELECT's WHERE clause (empty without one)."""
    for i, token in enumerate(tokens):
        if token.upper == "WHERE":
            return tokens[i + 1 :]
    return []


def _terms(tokens: list[_Token]) -> list[list[_Token]] | None:
    """The AND-ed terms at the top of a condition, brackets opened; None when an OR
    or a NOT stands at the top (then no term is certain to hold)."""
    while len(tokens) > 2 and tokens[0].text == "(" and _closes(tokens) == len(tokens) - 1:
        tokens = tokens[1:-1]
    terms: list[list[_Token]] = [[]]
    level = 0
    for i, token in enumerate(tokens):
        level += token.text in ("(", "[", "{") and 1 or 0
        level -= token.text in (")", "]", "}") and 1 or 0
        if level == 0 and token.upper in ("OR", "NOT"):
            return None
        between = i >= 2 and tokens[i - 2].upper == "BETWEEN"
        if level == 0 and token.upper == "AND" and not between:
            terms.append([])
        else:
            terms[-1].append(token)
    out: list[list[_Token]] = []
    for term in terms:
        if term and term[0].text == "(" and _closes(term) == len(term) - 1:
            inner = _terms(term)
            if inner is None:
                continue  # not certain: this term proves nothing
            out.extend(inner)
        else:
            out.append(term)
    return out


def _closes(tokens: list[_Token]) -> int:
    """The index of the bracket closing ``tokens[0]``."""
    level = 0
    for i, token in enumerate(tokens):
        level += token.text == "(" and 1 or 0
        level -= token.text == ")" and 1 or 0
        if level == 0:
            return i
    return -1


def _has_key_equality(where: list[_Token], key: str) -> bool:
    terms = _terms(where) if where else None
    for term in terms or []:
        if len(term) == 3 and term[1].text == "=":
            names = {term[0].attribute(), term[2].attribute()}
            values = {term[0].kind, term[2].kind} & {"param", "number"}
            if key in names and values:
                return True
        if len(term) >= 3 and term[0].attribute() == key and term[1].upper == "IN":
            return True
    return False


def _partial(tokens: list[_Token], kind: str, target: _Target) -> bool:
    """Whether the returned items may lack attributes (a projection, RETURNING MODIFIED,
    an index that does not project every attribute)."""
    if kind == "SELECT":
        projection = tokens[1].text if len(tokens) > 1 else ""
        return projection != "*" or target.model._meta.key_schema(target.index).projection != "ALL"
    words = [t.upper for t in tokens]
    return "RETURNING" in words and words[words.index("RETURNING") + 1] != "ALL"


# --- running ---------------------------------------------------------------------------


class Result(Generic[M]):
    """The items a statement returned, as model instances.

    The first page came with the call; iterating fetches the next ones
    (``NextToken``) one request at a time, when they are needed. Iterate once.
    """

    def __init__(self, statement: Statement, consistent: bool) -> None:
        self.statement = statement
        self._request = statement.request()
        if consistent:
            self._request["ConsistentRead"] = True
        self._page: dict[str, Any] | None = get_handle().call("execute_statement", **self._request)

    def __repr__(self) -> str:
        return f"<partiql.Result of {self.statement.model.__name__}: {self.statement.text!r}>"

    def __iter__(self) -> Iterator[M]:
        model = self.statement.model
        decode, partial = model._meta.decode, self.statement.partial
        while self._page is not None:
            page, self._page = self._page, None
            for item in own_items(model, page.pop("Items", []), "PartiQL SELECT"):
                yield decode(item, partial=partial)  # type: ignore[misc]
            token = page.get("NextToken")
            if token:
                self._page = get_handle().call(
                    "execute_statement", **self._request, NextToken=token
                )


def execute(
    statement: str,
    parameters: Sequence[Any] = (),
    *,
    model: type[Model] | None = None,
    scan: bool = False,
    consistent: bool = False,
) -> Result[Any]:
    """Send one ``ExecuteStatement`` now; the items it returns, decoded by the model
    of its table (see the module docstring). ``model`` is what ``{table}`` names."""
    return Result(prepare(statement, parameters, model=model, scan=scan), consistent)


def execute_transaction(
    statements: Sequence[tuple[str, Sequence[Any]] | str],
) -> list[Any]:
    """One ``ExecuteTransaction``: every statement applies, or none (``TransactionCanceled``
    with DynamoDB's reason per statement). All reads (SELECT) or all writes, as
    DynamoDB requires. Returns one entry per statement: for a read transaction, the
    item it read as an instance (``None`` when there is none); for writes, ``None``.

    One ``ClientRequestToken`` is reused by every retry, so a repeat after a lost
    answer is applied once (DynamoDB remembers it for 10 minutes)."""
    compiled = [prepare(*((s,) if isinstance(s, str) else s), scan=False) for s in statements]
    if not compiled:
        raise QueryError("execute_transaction() needs at least one statement.")
    response = get_handle().call(
        "execute_transaction",
        TransactStatements=[s.request() for s in compiled],
        ClientRequestToken=os.urandom(16).hex(),
    )
    answers = response.get("Responses") or []
    out: list[Any] = [None] * len(compiled)
    if len(answers) == len(compiled):
        for i, (statement, answer) in enumerate(zip(compiled, answers, strict=True)):
            item = answer.get("Item")
            if item is not None and own_items(statement.model, [item], "PartiQL SELECT"):
                out[i] = statement.model._meta.decode(item, partial=statement.partial)
    return out
