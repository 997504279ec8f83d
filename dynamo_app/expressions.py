"""Condition, key, update and projection expressions without string-building.

Every attribute name is sent as a placeholder (``#n0``, ``#n1``, ...) and
every value as ``:v0``, ``:v1``, ...: none of DynamoDB's 573 reserved words
(``name``, ``status``, ``size``, ``data``, ...) can break a request, and no
caller ever concatenates user input into an expression.

Conditions are built with :class:`Attr`::

    (Attr("status") == "open") & (Attr("retries") < 3) | ~Attr("owner").exists()

A :class:`Compiler` turns them into expression text plus the placeholder
maps. Models give the compiler two hooks: ``resolve`` maps a Python path
(``"address.city"``) to stored attribute names, ``encode`` turns an operand
into wire form the way the field stores it. Without them, names pass through
and values are encoded as plain JSON-like values.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

from .client import wire
from .exceptions import QueryError

Path = tuple[str | int, ...]
Resolver = Callable[[str], Path]
# (path as written, value, kind) -> wire value; kind is "value", "element" or "size".
Encoder = Callable[[str, Any, str], dict[str, Any]]

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")


@functools.lru_cache(maxsize=4096)
def parse_path(path: str) -> Path:
    """``"a.b[2].c"`` -> ``("a", "b", 2, "c")`` (kept: a query or write names the
    same few paths again and again, up to six times per Query)."""
    parts: list[str | int] = []
    for segment in path.split("."):
        match = _SEGMENT.fullmatch(segment)
        if not match:
            raise ValueError(f"{path!r} is not an attribute path (use names, dots and [index])")
        parts.append(match.group(1))
        parts.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return tuple(parts)


def _plain_encode(path: str, value: Any, kind: str) -> dict[str, Any]:
    return wire.encode(value)


class Compiler:
    """Collects the name and value placeholders of one request's expressions."""

    def __init__(self, resolve: Resolver = parse_path, encode: Encoder = _plain_encode) -> None:
        self.resolve = resolve
        self.encode = encode
        self.names: dict[str, str] = {}
        self.values: dict[str, dict[str, Any]] = {}
        # (path, placeholder) of each update value the item will hold (SET, ADD,
        # appended values), so the caller can check the item can still fit.
        self.stored: list[tuple[str, str]] = []
        self._name_ids: dict[str, str] = {}

    def name(self, attribute: str) -> str:
        placeholder = self._name_ids.get(attribute)
        if placeholder is None:
            placeholder = f"#n{len(self._name_ids)}"
            self._name_ids[attribute] = placeholder
            self.names[placeholder] = attribute
        return placeholder

    def path(self, path: str) -> str:
        text = ""
        for part in self.resolve(path):
            if isinstance(part, int):
                text += f"[{part}]"
            else:
                text += ("." if text else "") + self.name(part)
        return text

    def value(self, wire_value: dict[str, Any]) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = wire_value
        return placeholder

    def operand(self, path: str, value: Any, kind: str = "value") -> str:
        return self.value(self.encode(path, value, kind))

    def stored_operand(self, path: str, value: Any) -> str:
        placeholder = self.operand(path, value)
        self.stored.append((path, placeholder))
        return placeholder

    def projection(self, paths: Iterable[str]) -> str:
        return ", ".join(self.path(p) for p in paths)

    def params(self) -> dict[str, Any]:
        """``ExpressionAttributeNames`` / ``Values`` for the request (omitted when empty)."""
        out: dict[str, Any] = {}
        if self.names:
            out["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            out["ExpressionAttributeValues"] = dict(self.values)
        return out


# --- conditions ------------------------------------------------------------------


class Condition:
    """A condition (or filter, or key condition); combine with ``&``, ``|`` and ``~``."""

    def compile(self, c: Compiler) -> str:
        raise NotImplementedError

    def paths(self) -> list[str]:
        """The attribute paths the condition reads (for validation by models)."""
        raise NotImplementedError

    def __and__(self, other: Condition) -> Condition:
        return _Boolean("AND", self, _check(other))

    def __or__(self, other: Condition) -> Condition:
        return _Boolean("OR", self, _check(other))

    def __invert__(self) -> Condition:
        return _Not(self)

    def __bool__(self) -> bool:
        raise TypeError(
            "A condition has no truth value: combine conditions with & | ~, not and/or/not."
        )


def _check(other: object) -> Condition:
    if not isinstance(other, Condition):
        raise TypeError(f"cannot combine a condition with {type(other).__name__}")
    return other


class _Boolean(Condition):
    def __init__(self, op: str, left: Condition, right: Condition) -> None:
        self.op, self.left, self.right = op, left, right

    def compile(self, c: Compiler) -> str:
        return f"({self.left.compile(c)} {self.op} {self.right.compile(c)})"

    def paths(self) -> list[str]:
        return self.left.paths() + self.right.paths()

    def __repr__(self) -> str:
        return f"({self.left!r} {self.op} {self.right!r})"


class _Not(Condition):
    def __init__(self, inner: Condition) -> None:
        self.inner = inner

    def compile(self, c: Compiler) -> str:
        return f"(NOT {self.inner.compile(c)})"

    def paths(self) -> list[str]:
        return self.inner.paths()

    def __repr__(self) -> str:
        return f"~{self.inner!r}"


class Comparison(Condition):
    """``path OP value`` with OP one of = <> < <= > >=."""

    def __init__(self, path: str, op: str, value: Any, *, size: bool = False) -> None:
        self.path, self.op, self.value, self.size = path, op, value, size

    def compile(self, c: Compiler) -> str:
        left = c.path(self.path)
        if self.size:
            return f"size({left}) {self.op} {c.operand(self.path, self.value, 'size')}"
        return f"{left} {self.op} {c.operand(self.path, self.value)}"

    def paths(self) -> list[str]:
        return [self.path]

    def __repr__(self) -> str:
        target = f"size({self.path})" if self.size else self.path
        return f"{target} {self.op} {self.value!r}"


class Between(Condition):
    def __init__(self, path: str, low: Any, high: Any) -> None:
        self.path, self.low, self.high = path, low, high

    def compile(self, c: Compiler) -> str:
        low, high = c.operand(self.path, self.low), c.operand(self.path, self.high)
        try:
            wire.check_range(c.values[low], c.values[high])
        except wire.WireError as exc:
            raise QueryError(
                f"{self!r}: {exc}. DynamoDB refuses it: give two strings, two numbers or "
                "two binary values, the lower one first. Nothing was sent."
            ) from None
        return f"{c.path(self.path)} BETWEEN {low} AND {high}"

    def paths(self) -> list[str]:
        return [self.path]

    def __repr__(self) -> str:
        return f"{self.path} BETWEEN {self.low!r} AND {self.high!r}"


class Function(Condition):
    """``begins_with``, ``contains``, ``attribute_exists``, ``attribute_not_exists``."""

    def __init__(self, function: str, path: str, *args: Any, kind: str = "value") -> None:
        self.function, self.path, self.args, self.kind = function, path, args, kind

    def compile(self, c: Compiler) -> str:
        operands = [c.path(self.path)] + [c.operand(self.path, a, self.kind) for a in self.args]
        return f"{self.function}({', '.join(operands)})"

    def paths(self) -> list[str]:
        return [self.path]

    def __repr__(self) -> str:
        return f"{self.function}({', '.join([self.path, *map(repr, self.args)])})"


class In(Condition):
    def __init__(self, path: str, values: Iterable[Any]) -> None:
        self.path, self.values = path, list(values)
        if not 1 <= len(self.values) <= 100:
            raise ValueError("is_in() takes 1 to 100 values (DynamoDB's IN limit)")

    def compile(self, c: Compiler) -> str:
        operands = ", ".join(c.operand(self.path, v) for v in self.values)
        return f"{c.path(self.path)} IN ({operands})"

    def paths(self) -> list[str]:
        return [self.path]

    def __repr__(self) -> str:
        return f"{self.path} IN {self.values!r}"


class _Comparable:
    """``==``, ``!=``, ``<``, ... on ``path`` (or on ``size(path)``), each giving a condition."""

    path: str
    _size = False

    def __eq__(self, value: Any) -> Condition:  # type: ignore[override]
        return Comparison(self.path, "=", value, size=self._size)

    def __ne__(self, value: Any) -> Condition:  # type: ignore[override]
        return Comparison(self.path, "<>", value, size=self._size)

    def __lt__(self, value: Any) -> Condition:
        return Comparison(self.path, "<", value, size=self._size)

    def __le__(self, value: Any) -> Condition:
        return Comparison(self.path, "<=", value, size=self._size)

    def __gt__(self, value: Any) -> Condition:
        return Comparison(self.path, ">", value, size=self._size)

    def __ge__(self, value: Any) -> Condition:
        return Comparison(self.path, ">=", value, size=self._size)

    __hash__ = None  # type: ignore[assignment]


class _Size(_Comparable):
    """``size(path)`` as the left side of a comparison: ``Attr("tags").size() > 2``."""

    _size = True

    def __init__(self, path: str) -> None:
        self.path = path


class Attr(_Comparable):
    """An attribute in a condition, by its Python field name or a path into it.

    ``Attr("status") == "open"``, ``Attr("at").between(1, 9)``,
    ``Attr("address.city").begins_with("Ky")``, ``Attr("tags").contains("red")``,
    ``Attr("owner").not_exists()``, ``Attr("tags").size() >= 2``.
    """

    def __init__(self, path: str) -> None:
        parse_path(path)  # reject a malformed path where it is written
        self.path = path

    def __repr__(self) -> str:
        return f"Attr({self.path!r})"

    def between(self, low: Any, high: Any) -> Condition:
        return Between(self.path, low, high)

    def begins_with(self, prefix: Any) -> Condition:
        return Function("begins_with", self.path, prefix)

    def contains(self, value: Any) -> Condition:
        """A substring of a string, or a member of a set or list."""
        return Function("contains", self.path, value, kind="element")

    def is_in(self, values: Iterable[Any]) -> Condition:
        return In(self.path, values)

    def exists(self) -> Condition:
        return Function("attribute_exists", self.path)

    def not_exists(self) -> Condition:
        return Function("attribute_not_exists", self.path)

    def size(self) -> _Size:
        return _Size(self.path)


LOOKUPS: dict[str, Callable[[Attr, Any], Condition]] = {
    "exact": lambda a, v: a == v,
    "ne": lambda a, v: a != v,
    "lt": lambda a, v: a < v,
    "lte": lambda a, v: a <= v,
    "gt": lambda a, v: a > v,
    "gte": lambda a, v: a >= v,
    "between": lambda a, v: a.between(*_pair(v)),
    "begins_with": lambda a, v: a.begins_with(v),
    "contains": lambda a, v: a.contains(v),
    "in": lambda a, v: a.is_in(v),
    "exists": lambda a, v: a.exists() if v else a.not_exists(),
}
KEY_LOOKUPS = ("exact", "lt", "lte", "gt", "gte", "between", "begins_with")


def _pair(value: Any) -> tuple[Any, Any]:
    try:
        low, high = value
    except (TypeError, ValueError):
        raise ValueError(f"__between takes a (low, high) pair, got {value!r}") from None
    return low, high


def split_lookup(key: str) -> tuple[str, str]:
    """``"at__gte"`` -> ``("at", "gte")``; no suffix means ``exact``."""
    path, _, lookup = key.rpartition("__")
    if path and lookup in LOOKUPS:
        return path, lookup
    return key, "exact"


def lookup_condition(key: str, value: Any) -> Condition:
    """A Django-style keyword lookup (``at__gte=3``) as a condition."""
    path, lookup = split_lookup(key)
    return LOOKUPS[lookup](Attr(path), value)


def all_of(conditions: Iterable[Condition]) -> Condition | None:
    result: Condition | None = None
    for condition in conditions:
        result = condition if result is None else result & condition
    return result


# --- updates -----------------------------------------------------------------------


class Update:
    """The actions of one UpdateExpression, compiled to ``SET ... REMOVE ... ADD ... DELETE``."""

    def __init__(self) -> None:
        self._actions: list[tuple[str, str, Any]] = []

    def __bool__(self) -> bool:
        return bool(self._actions)

    def paths(self) -> list[str]:
        return [path for _, path, _ in self._actions]

    def set(self, path: str, value: Any) -> Update:
        self._actions.append(("set", path, value))
        return self

    def set_if_missing(self, path: str, value: Any) -> Update:
        """Set ``value`` only where the item lacks the attribute (an upsert's create)."""
        self._actions.append(("set_if_missing", path, value))
        return self

    def append(self, path: str, values: list[Any]) -> Update:
        """Append to a list attribute, creating it when missing."""
        self._actions.append(("append", path, values))
        return self

    def add(self, path: str, value: Any) -> Update:
        """Atomically add to a number (creating it at 0) or add members to a set."""
        self._actions.append(("add", path, value))
        return self

    def remove(self, path: str) -> Update:
        self._actions.append(("remove", path, None))
        return self

    def discard(self, path: str, members: Any) -> Update:
        """Remove members from a set attribute."""
        self._actions.append(("discard", path, members))
        return self

    def compile(self, c: Compiler) -> str:
        clauses: dict[str, list[str]] = {"SET": [], "REMOVE": [], "ADD": [], "DELETE": []}
        for action, path, value in self._actions:
            target = c.path(path)
            if action == "set":
                clauses["SET"].append(f"{target} = {c.stored_operand(path, value)}")
            elif action == "set_if_missing":
                clauses["SET"].append(
                    f"{target} = if_not_exists({target}, {c.stored_operand(path, value)})"
                )
            elif action == "append":
                empty = c.value({"L": []})
                clauses["SET"].append(
                    f"{target} = list_append(if_not_exists({target}, {empty}), "
                    f"{c.stored_operand(path, value)})"
                )
            elif action == "remove":
                clauses["REMOVE"].append(target)
            elif action == "add":
                clauses["ADD"].append(f"{target} {c.stored_operand(path, value)}")
            else:
                clauses["DELETE"].append(f"{target} {c.operand(path, value)}")
        return " ".join(f"{verb} {', '.join(parts)}" for verb, parts in clauses.items() if parts)
