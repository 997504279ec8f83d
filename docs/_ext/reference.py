"""Reference pages generated from the code, so they cannot drift from it.

Each directive writes markdown that MyST parses in place:

* ``{dynamo-settings}``: every key of the ``DYNAMO`` section, from its declaration in
  ``dynamo_app.conf`` (default as written in settings.py, and its meaning);
* ``{dynamo-commands}``: every management command with every option, from its parser;
* ``{dynamo-checks}``: every system check id, found in the source where it is reported;
* ``{dynamo-exceptions}``: the exception hierarchy of ``dynamo_app.exceptions``.
"""

from __future__ import annotations

import ast
import inspect
import pkgutil
import re
from argparse import SUPPRESS, Action, ArgumentParser
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management import BaseCommand, load_command_class
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

import dynamo_app
from dynamo_app import conf, exceptions
from dynamo_app.management import commands

CHECK_ID = re.compile(r"^dynamo\.[EW]\d{3}$")


class Generated(SphinxDirective):
    """A directive whose content is markdown made by ``markdown()``."""

    def markdown(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.container()
        lines = StringList(self.markdown(), source=self.get_source_info()[0])
        nested_parse_with_titles(self.state, lines, container)
        return container.children


def cell(text: str) -> str:
    """Text for a markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def shown(value: Any) -> str:
    """A default as a user writes it in settings.py."""
    return f"`{value!r}`" if not isinstance(value, str) else f'`"{value}"`'


class Settings(Generated):
    def markdown(self) -> list[str]:
        lines = ["| key | default | meaning |", "|---|---|---|"]
        for key, field in conf.keys(conf.DynamoSettings).items():
            meta = field.metadata
            lines.append(f"| `{key}` | {shown(meta['default'])} | {cell(meta['meaning'])} |")
        lines += ["", "The keys of `RETRY`:", "", "| key | default | meaning |", "|---|---|---|"]
        for key, field in conf.keys(conf.RetrySettings).items():
            meta = field.metadata
            lines.append(f"| `{key}` | {shown(meta['default'])} | {cell(meta['meaning'])} |")
        return lines


def command_names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(commands.__path__))


def options(parser: ArgumentParser, common: set[str]) -> Iterator[Action]:
    for action in parser._actions:
        if action.help is not SUPPRESS and action.dest not in common:
            yield action


def usage(action: Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    flags = ", ".join(f"`{flag}`" for flag in action.option_strings)
    if action.nargs == 0:
        return flags
    value = action.metavar or (
        "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()
    )
    return f"{flags} `{value}`"


class Commands(Generated):
    def markdown(self) -> list[str]:
        base = BaseCommand().create_parser("manage.py", "command")
        common = {action.dest for action in base._actions}
        lines = []
        for name in command_names():
            command = load_command_class("dynamo_app", name)
            parser = command.create_parser("manage.py", name)
            formatter = parser._get_formatter()
            lines += [f"## `{name}`", "", cell(str(command.help)), ""]
            lines += ["```text", parser.format_usage().strip(), "```", ""]
            rows = [
                f"| {usage(a)} | {cell(formatter._expand_help(a) if a.help else '')} |"
                for a in options(parser, common)
            ]
            if rows:
                lines += ["| argument or option | meaning |", "|---|---|", *rows, ""]
        flags = ", ".join(f"`{f}`" for a in base._actions for f in a.option_strings[-1:])
        return [
            "Every command also takes Django's common options: " + flags + ".",
            "",
            *lines,
        ]


def text_of(node: ast.expr | None) -> str | None:
    """A message as written in the source, ``…`` for each interpolated value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = text_of(node.left), text_of(node.right)
        return None if left is None or right is None else left + right
    return None


def reported_checks() -> dict[str, list[tuple[str, str]]]:
    """Check id -> (what reports it, message) for each place in the package."""
    found: dict[str, list[tuple[str, str]]] = {}
    package = Path(dynamo_app.__file__).parent
    for path in sorted(package.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if not re.search(r"dynamo\.[EW]\d", source):
            continue  # parsing only the modules that report a check
        tree = ast.parse(source)
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            doc = (ast.get_docstring(function) or "").split("\n\n")[0].replace("\n", " ")
            for call in ast.walk(function):
                if not isinstance(call, ast.Call):
                    continue
                values = [*call.args, *(k.value for k in call.keywords)]
                ids = [
                    v.value
                    for v in values
                    if isinstance(v, ast.Constant)
                    and isinstance(v.value, str)
                    and CHECK_ID.match(v.value)
                ]
                texts = [t for v in call.args if (t := text_of(v)) and not CHECK_ID.match(t)]
                for check in ids:
                    found.setdefault(check, []).append((doc, texts[0] if texts else ""))
    return dict(sorted(found.items()))


class Checks(Generated):
    def markdown(self) -> list[str]:
        lines = ["| id | checks | message |", "|---|---|---|"]
        for check, places in reported_checks().items():
            seen = list(dict.fromkeys(places))
            docs = " · ".join(dict.fromkeys(cell(d) for d, _ in seen if d))
            messages = " · ".join(dict.fromkeys(f"“{cell(m)}”" for _, m in seen if m))
            lines.append(f"| `{check}` | {docs} | {messages} |")
        return lines


class Exceptions(Generated):
    def markdown(self) -> list[str]:
        classes = [getattr(exceptions, name) for name in exceptions.__all__]
        return list(self.tree(exceptions.DynamoError, classes, 0))

    def tree(self, cls: type, classes: list[type], depth: int) -> Iterator[str]:
        others = [
            b.__name__ for b in cls.__mro__[1:] if b not in classes and b.__module__ != "builtins"
        ]
        also = [b.__qualname__ for b in cls.__bases__ if b.__module__ == "builtins"]
        extra = ", ".join(f"`{n}`" for n in dict.fromkeys([*also, *others[:1]]) if n)
        summary = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
        line = f"{{py:class}}`~dynamo_app.exceptions.{cls.__name__}`"
        if extra:
            line += f" (also {extra})"
        yield "  " * depth + f"- {line}: {summary}"
        for sub in classes:
            if cls in sub.__bases__:
                yield from self.tree(sub, classes, depth + 1)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("dynamo-settings", Settings)
    app.add_directive("dynamo-commands", Commands)
    app.add_directive("dynamo-checks", Checks)
    app.add_directive("dynamo-exceptions", Exceptions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
