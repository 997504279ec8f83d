"""The manual is executed: every block of README.md and of each page under docs/ runs
here, as a reader would run it, or its source says why it cannot.

Each page is one test. Its blocks run in order, in a fresh project: no model declared
(the suite's tables are withdrawn meanwhile and put back), the suite's settings pointed
at the run's test server, empty tables. So a page declares every model it uses (a small
"the models used below" block where the models live elsewhere).

* ```python: run by pytest-examples (pydantic's): a block runs as a module holding the
  names the page's blocks before it left, each ``#>`` comment under a ``print()`` must be
  what it prints, and a traceback names the page's lines. Before each Python block the tables
  declared so far are created (``dynamo_app.deploy.schema.migrate``, as ``AUTO_MIGRATE`` does).
  A block that starts with ``# settings.py`` is applied as settings: its ``DYNAMO`` is
  parsed as written, then pointed at the test server; a list with ``...`` must hold its
  other entries in the suite's settings. A ``test_*`` function or ``TestCase`` it defines
  is run as pytest / ``manage.py test`` would, on empty tables.
* ```bash: each line is a command, run in this process: ``python manage.py NAME ...``
  through Django's own ``run_from_argv`` (what manage.py runs), ``python -m benchmarks ...``
  through its ``main`` at smoke sizes (``--quick --repeat 1``). ``#>`` lines under a command
  are its output (doctest's ``...`` and whitespace rules); a command that exits with
  N != 0 prints a last line ``exit status N``.
* ```text: a message or an output shown, never run.
* ```python not-run: WHY / ```bash not-run: WHY: cannot run here (AWS, installs, a server
  in the foreground); the run's summary counts them with their reasons.
* ```{name}: a directive of the site's generator (MyST's ``{toctree}``), not an example.

Why these tools: markdown-it-py finds the blocks (CommonMark, with line numbers);
pytest-examples runs and print-checks Python blocks. phmdoctest wants outputs in separate
blocks and generates test files; pytest's doctest wants ``>>>`` sessions, not code a
reader copies. Neither runs shell commands: those, and the page scoping, are ours.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import gc
import inspect
import io
import re
import shlex
import sys
import traceback
import unittest
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import ManagementUtility
from django.test import override_settings
from markdown_it import MarkdownIt
from pytest_examples import CodeExample, EvalExample

from dynamo_app import app_tables, conf
from dynamo_app.client.handle import get_handle
from dynamo_app.deploy import schema
from dynamo_app.test.counting import count_requests
from dynamo_app.testing import moto_only, settings_for_tests

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DOCUMENTS = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
# Its commands run on a moto server of their own (benchmarks/server.py), with tables of
# their own from the suite's registry.
BENCHMARKS = DOCS / "explanation" / "benchmarks.md"
LANGUAGES = ("python", "bash", "text", "yaml", "json", "hcl")  # the last four are shown, never run
NOT_RUN = "not-run:"
# The manage.py commands that are local and safe here (dynamo_local only with --help).
COMMANDS = {
    "check",
    "dynamo_check_unique",
    "dynamo_dump",
    "dynamo_load",
    "dynamo_local",
    "dynamo_migrate",
    "dynamo_plan",
    "dynamo_sequence",
}

HOW_TO_MARK = (
    "Fix the block, or, if it cannot run in a test (AWS only, an install, a server in the "
    "foreground), mark it in the source: ```{lang} not-run: <why> (no backticks in <why>: "
    "CommonMark ends the info string there). A Python block runs in a "
    "fresh project: declare the models it uses in an earlier block of its page. "
    "See tests/test_readme.py."
)


@dataclass(frozen=True)
class Block:
    document: Path
    title: str  # the page's
    line: int  # of the opening fence, 1-based
    language: str
    not_run: str | None  # the reason, for a block marked not-run
    source: str

    @property
    def name(self) -> str:
        return str(self.document.relative_to(ROOT))

    @property
    def where(self) -> str:
        return f"{self.name}:{self.line}"


def blocks(document: Path) -> list[Block]:
    title = ""
    found = []
    tokens = MarkdownIt("commonmark").parse(document.read_text(encoding="utf-8"))
    for number, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1":
            title = tokens[number + 1].content  # the heading's inline text
        elif token.type == "fence" and token.map is not None and not token.info.startswith("{"):
            language, _, rest = token.info.strip().partition(" ")
            rest = rest.strip()
            reason = rest[len(NOT_RUN) :].strip() if rest.startswith(NOT_RUN) else None
            found.append(
                Block(document, title, token.map[0] + 1, language, reason, token.content)
            )
    return found


ALL_BLOCKS = [block for document in DOCUMENTS for block in blocks(document)]


def summary() -> str:
    """The line the run's summary prints (conftest): what ran, what did not and why."""
    code = [b for b in ALL_BLOCKS if b.language in ("python", "bash")]
    skipped = [b for b in code if b.not_run is not None]
    reasons = "; ".join(f"{b.where} {b.not_run}" for b in skipped)
    return (
        f"manuals: {len(code) - len(skipped)} code blocks run, {len(skipped)} marked "
        f"not-run: {reasons}"
    )


def pages() -> list[Any]:
    grouped: dict[tuple[str, str], list[Block]] = {}
    for block in ALL_BLOCKS:
        grouped.setdefault((block.name, block.title), []).append(block)
    # The benchmarks run on their own moto server whatever the engine, in processes of
    # their own: the engine leg would only repeat them, and one moto leg runs them.
    benchmarks = (moto_only, pytest.mark.processes)
    return [
        pytest.param(
            group,
            id=f"{name}:{title or 'top'}",
            marks=benchmarks if group[0].document == BENCHMARKS else (),
        )
        for (name, title), group in grouped.items()
        if any(b.language in ("python", "bash") and b.not_run is None for b in group)
    ]


def test_every_block_says_what_it_is() -> None:
    problems = [
        f"{b.where}: ```{b.language or '(no info string)'}: say ```python, ```bash or ```text"
        for b in ALL_BLOCKS
        if b.language not in LANGUAGES
    ] + [
        f"{b.where}: a not-run block says why: ```{b.language} not-run: <why>"
        for b in ALL_BLOCKS
        if b.not_run == ""
    ]
    assert not problems, "\n".join(problems)


def test_the_commands_that_skip_the_startup_check_are_the_ones_listed() -> None:
    from dynamo_app.apps import SCHEMA_EXEMPT_COMMANDS

    text = (DOCS / "howto" / "schema.md").read_text(encoding="utf-8")
    start = text.index("while the schema is wrong or missing, for:")
    listed = text[start:].split(". ", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) == SCHEMA_EXEMPT_COMMANDS


class Section:
    """One page's run: its names, its settings, its tables, on the run's server."""

    def __init__(self, request: pytest.FixtureRequest, store: Any, stack: contextlib.ExitStack):
        self.request = request
        self.store = store
        self.stack = stack
        self.names: dict[str, Any] = {}
        self.evaluator = EvalExample(
            tmp_path=request.getfixturevalue("tmp_path"), pytest_request=request
        )

    def run(self, block: Block) -> None:
        if block.language == "python":
            self.python(block)
        elif block.language == "bash":
            for line, argv, expected in commands(block):
                output, status = self.command(block, line, argv)
                check_output(block, line, expected, output, status)

    # Python blocks

    def python(self, block: Block) -> None:
        check_output_comments(block)
        schema.migrate()  # the tables declared so far, as AUTO_MIGRATE would
        example = CodeExample.create(
            block.source, path=block.document, start_line=block.line, prefix=block.language
        )
        main = sys.modules["__main__"]
        before = dict(self.names)
        try:
            self.names = self.evaluator.run_print_check(example, module_globals=self.names)
        finally:
            sys.modules["__main__"] = main  # pytest-examples runs each block as __main__
        new = {k: v for k, v in self.names.items() if before.get(k, _MISSING) is not v}
        if block.source.startswith("# settings.py"):
            self.apply_settings(new)
        for name, value in new.items():
            if name.startswith("test") and inspect.isfunction(value):
                self.run_test_function(value)
            elif (
                isinstance(value, type)
                and issubclass(value, unittest.TestCase)
                and (
                    value.__module__ == "__main__"  # declared in the block, not imported
                )
            ):
                self.run_test_case(value)

    def apply_settings(self, new: dict[str, Any]) -> None:
        """As a settings module: parsed at startup, then the run's server (like TestStore)."""
        for name, value in new.items():
            if not name.isupper():
                continue
            if isinstance(value, list | tuple) and Ellipsis in value:
                configured = getattr(settings, name)
                missing = [v for v in value if v is not Ellipsis and v not in configured]
                assert not missing, f"{name} lacks {missing}"
                continue
            if name == "DYNAMO":
                conf.parse(value, debug=new.get("DEBUG", settings.DEBUG))
                value = settings_for_tests(value, self.store.url)
            self.stack.enter_context(override_settings(**{name: value}))
        app_tables.register()  # what AppConfig.ready() registers for these settings

    def run_test_function(self, test: Any) -> None:
        """As pytest runs it: the dynamo_db fixture or mark empties the tables first."""
        parameters = inspect.signature(test).parameters
        marks = {mark.name for mark in getattr(test, "pytestmark", [])}
        unknown = set(parameters) - {"dynamo_db", "dynamo_requests"}
        assert not unknown, f"{test.__name__} asks for fixtures this test lacks: {unknown}"
        if "dynamo_db" in marks or parameters:
            self.store.empty()
        with contextlib.ExitStack() as fixtures:
            values = {
                "dynamo_db": lambda: get_handle(),
                "dynamo_requests": lambda: fixtures.enter_context(count_requests()),
            }
            test(**{name: values[name]() for name in parameters})

    def run_test_case(self, case: type[unittest.TestCase]) -> None:
        """As DynamoTestRunner runs it: the class setup on empty tables, and each
        test on empty tables plus what ``setUpTestData`` wrote."""
        store = self.store

        class EmptyTablesPerTest(unittest.TestResult):
            def startTest(self, test: unittest.TestCase) -> None:
                store.empty(type(test))
                super().startTest(test)

        store.empty()
        result = EmptyTablesPerTest()
        unittest.defaultTestLoader.loadTestsFromTestCase(case).run(result)
        problems = [f"{test}: {trace}" for test, trace in result.errors + result.failures]
        assert result.testsRun and not problems, "\n".join(problems)

    # Shell blocks

    def command(self, block: Block, line: int, argv: list[str]) -> tuple[str, int]:
        if argv[:3] == ["python", "-m", "benchmarks"]:
            return self.benchmarks(argv[3:]), 0
        output = io.StringIO()
        status: Any = 0
        if (
            argv[:2] != ["python", "manage.py"]
            or argv[2:3] == []
            or argv[2] not in COMMANDS
            or (
                argv[2] == "dynamo_local" and "--help" not in argv  # it would serve until stopped
            )
        ):
            pytest.fail(
                f"{block.name}:{line}: `{shlex.join(argv)}` is not a command this "
                "test runs. " + HOW_TO_MARK.format(lang="bash"),
                pytrace=False,
            )
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            try:  # what manage.py runs, in this process
                ManagementUtility(argv[1:]).fetch_command(argv[2]).run_from_argv(argv[1:])
            except SystemExit as exc:
                status = exc.code or 0
        return output.getvalue(), int(status)

    def benchmarks(self, argv: list[str]) -> str:
        """The same benchmarks at their smoke sizes (seconds, not minutes), each run once."""
        from benchmarks.__main__ import main

        if "--repeat" in argv:
            position = argv.index("--repeat")
            argv = argv[:position] + argv[position + 2 :]
        argv = [a for a in argv if a != "--quick"] + ["--quick", "--repeat", "1"]
        if tuple(argv) not in BENCHMARK_RUNS:
            # Every measurement starts with gc.collect(): frozen, the suite's own heap
            # (a worker's every module and fixture) is not walked each time.
            gc.freeze()
            try:
                with contextlib.chdir(ROOT), contextlib.redirect_stdout(io.StringIO()) as output:
                    main(argv)  # from the repository, where its server module is found
            finally:
                gc.unfreeze()
            BENCHMARK_RUNS[tuple(argv)] = output.getvalue()
        return BENCHMARK_RUNS[tuple(argv)]


BENCHMARK_RUNS: dict[tuple[str, ...], str] = {}
_MISSING = object()


def check_output_comments(block: Block) -> None:
    """Every ``#>`` comment must sit under a print() (pytest-examples checks only those)."""
    lines = block.source.splitlines()
    prints = {
        node.end_lineno
        for node in ast.walk(ast.parse(block.source))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print"
    }
    for number, text in enumerate(lines, 1):
        if text.lstrip().startswith("#>") and not lines[number - 2].lstrip().startswith("#>"):
            assert number - 1 in prints, (
                f"{block.name}:{block.line + number}: a #> comment shows what the "
                "print() just above it prints; put one there."
            )
        assert "# ->" not in text, (
            f"{block.name}:{block.line + number}: write an output as a #> line "
            "under a print() of the value, which this test compares."
        )


def commands(block: Block) -> Iterator[tuple[int, list[str], list[str]]]:
    """(page line, argv, expected output lines) for each command of a shell block."""
    current: tuple[int, list[str], list[str]] | None = None
    for number, text in enumerate(block.source.splitlines(), block.line + 1):
        if text.lstrip().startswith("#>"):
            assert current is not None, f"{number}: #> output before any command"
            current[2].append(text.lstrip()[2:].removeprefix(" "))
            continue
        argv = shlex.split(text, comments=True)
        if argv:
            if current is not None:
                yield current
            current = (number, argv, [])
    if current is not None:
        yield current


def check_output(block: Block, line: int, expected: list[str], output: str, status: int) -> None:
    got = output + (f"exit status {status}\n" if status else "")
    if not expected:
        assert status == 0, f"{block.name}:{line} exited with {status}:\n{got}"
        return
    want = "\n".join(expected) + "\n"
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    if not checker.check_output(want, got, flags):
        difference = checker.output_difference(doctest.Example("", want), got, flags)
        pytest.fail(f"{block.name}:{line}: {difference}", pytrace=False)


def failure(block: Block, exc: Exception) -> str:
    """Where in the manual the block failed, with what, and what to do."""
    lines = block.source.splitlines()
    module = f"{block.document.stem}_{block.line}_"  # pytest-examples' file for the block
    where = []
    for frame, number in traceback.walk_tb(exc.__traceback__):
        filename = frame.f_code.co_filename
        if Path(filename).name.startswith(module):  # a function of the block, called later
            number += block.line
        elif filename != str(block.document):  # pytest-examples maps the block's own frames
            continue
        text = lines[number - block.line - 1] if 0 < number - block.line <= len(lines) else ""
        where.append(f"{block.name}:{number}: {text.strip()}")
    error = "".join(traceback.format_exception_only(exc)).strip()
    return "\n".join([*(where or [block.where]), error, HOW_TO_MARK.format(lang=block.language)])


@contextlib.contextmanager
def fresh_project() -> Iterator[None]:
    """No model nor counter declared while a page runs; the suite's own are put back after it."""
    from dynamo_app.models import registry as concrete
    from dynamo_app.tables import registry

    tables, models = dict(registry._tables), dict(concrete._models)
    counters = set(app_tables.counters_declared)
    registry._tables.clear()
    concrete._models.clear()
    app_tables.counters_declared.clear()
    try:
        yield
    finally:
        registry._tables.clear()
        registry._tables.update(tables)
        concrete._models.clear()
        concrete._models.update(models)
        app_tables.counters_declared.clear()
        app_tables.counters_declared.update(counters)


@pytest.mark.django_db  # for a TestCase a block defines, and the SQL sessions benchmark
@pytest.mark.parametrize("page", pages())
def test_page_runs_as_written(
    page: list[Block], request: pytest.FixtureRequest, dynamo_server: Any
) -> None:
    request.getfixturevalue("monkeypatch").chdir(request.getfixturevalue("tmp_path"))
    project = fresh_project() if page[0].document != BENCHMARKS else contextlib.nullcontext()
    with contextlib.ExitStack() as stack, project:
        dynamo_server.empty()
        runner = Section(request, dynamo_server, stack)
        for block in page:
            if block.language not in ("python", "bash") or block.not_run is not None:
                continue
            try:
                runner.run(block)
            except pytest.fail.Exception as exc:
                where = "" if exc.msg.startswith(block.name) else f"{block.where}: "
                message = f"{where}{exc.msg}\n{HOW_TO_MARK.format(lang=block.language)}"
                raise pytest.fail.Exception(message, pytrace=False) from None
            except Exception as exc:
                # Reported here: pytest cannot render pytest-examples' frames of a page.
                raise pytest.fail.Exception(failure(block, exc), pytrace=False) from None
