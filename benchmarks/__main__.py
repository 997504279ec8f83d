"""``python -m benchmarks [--quick] [--only NAME,...] [--repeat N]``.

What it measures and how: docs/explanation/benchmarks.md."""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time

from .common import Context, Section, django_pointed_at, local_server

BENCHMARKS = [
    "codec",
    "operations",
    "sessions",
    "startup",
    "memory",
    "contention",
    "dataio",
    "concurrency",
    "single_table",
    "ids",
    "cache",
]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="dynamo_app against raw boto3, its resource layer's codec and PynamoDB, "
        "in one run on one local server. Prints markdown.",
    )
    parser.add_argument("--quick", action="store_true", help="smoke sizes (seconds, not minutes)")
    parser.add_argument(
        "--only", default=",".join(BENCHMARKS), help=f"comma-separated subset of {BENCHMARKS}"
    )
    parser.add_argument(
        "--repeat", type=int, default=None, help="runs per measurement (median; 7, --quick 1)"
    )
    args = parser.parse_args(argv)
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = set(args.only) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmark(s) {sorted(unknown)}; choose from {BENCHMARKS}")
    if args.repeat is None:
        args.repeat = 1 if args.quick else 7  # --quick is a smoke run: does every row run?
    return args


def main(argv: list[str] | None = None) -> list[Section]:
    args = parse(argv)
    command = "python -m benchmarks" + (" --quick" if args.quick else "")
    print(f"## `{command}`\n")
    print(
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}\n",
        flush=True,
    )
    sections = []
    with local_server() as url, django_pointed_at(url):
        from dynamo_app import cache
        from dynamo_app.sessions import register_table
        from dynamo_app.testing import create_tables

        from . import models  # noqa: F401 - registers the benchmark table

        register_table()
        cache.register_table()

        create_tables()
        ctx = Context(quick=args.quick, repeat=args.repeat, url=url)
        for name in args.only:
            section = importlib.import_module(f"benchmarks.{name}").run(ctx)
            print(section.markdown(), flush=True)
            sections.append(section)
    return sections


if __name__ == "__main__":
    main(sys.argv[1:])
