"""What a plain ``obj.save()`` crosses: ``python bin/save_path.py [--calls]``.

Saves the benchmark item (ten attributes of the common kinds; no unique
constraint, no version) against the local server under cProfile and prints,
per save, the calls made to dynamo_app's own functions and the package modules
they live in (the generated codec counts as ``models.codec``). Everything the
profiler sees ran inside ``save()``. The modules that turn values into wire
attributes (``ENCODING``) depend on the fields a model declares, not on the
path, so they are counted apart: the write path proper is the rest, which
tests/test_save_path.py holds to its budget. With ``--calls`` each function
is listed with its calls per save.
"""

from __future__ import annotations

import profile as profile_module
import pstats
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dynamo_app"
SAVES = 200
ENCODING = {"client.wire", "models.codec", "models.fields"}


def module_of(filename: str) -> str | None:
    """The dynamo_app module a code object comes from, or None for any other code."""
    if filename.startswith("<dynamo codec"):
        return "models.codec"
    path = Path(filename)
    if not path.is_relative_to(PACKAGE):
        return None
    return ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def profile(run: Callable[[], object], times: int) -> pstats.Stats:
    """``run()`` called ``times`` times, profiled on this thread only: cProfile sees
    every thread from Python 3.12 (it uses sys.monitoring), and the suite's local
    server answers in a thread of the same process. ``profile`` (sys.setprofile)
    stays on the calling thread."""
    def repeated() -> None:
        for _ in range(times):
            run()

    profiler = profile_module.Profile()
    profiler.runcall(repeated)
    return pstats.Stats(profiler)


def calls_by_function(stats: pstats.Stats) -> Counter[tuple[str, str]]:
    """The calls ``stats`` saw to dynamo_app's functions, by (module, function)."""
    calls: Counter[tuple[str, str]] = Counter()
    for (filename, line, name), (_, ncalls, *_rest) in stats.stats.items():  # type: ignore[attr-defined]
        module = module_of(filename)
        if module is not None:
            calls[(module, f"{name}:{line}")] += ncalls
    return calls


def write_path(calls: Counter[tuple[str, str]]) -> list[str]:
    """The modules of the write path proper: those that do not encode the item."""
    return sorted({module for module, _ in calls} - ENCODING)


def profile_saves() -> pstats.Stats:
    sys.path.insert(0, str(ROOT))
    from benchmarks.common import django_pointed_at, local_server

    with local_server() as url, django_pointed_at(url):
        from benchmarks.models import item
        from dynamo_app.testing import create_tables

        create_tables()
        obj = item(1)
        obj.save()  # warm up: the client, the codec, first-use imports
        return profile(obj.save, SAVES)


def main(argv: list[str]) -> int:
    calls = calls_by_function(profile_saves())
    modules = sorted({module for module, _ in calls})
    total = sum(calls.values()) / SAVES
    path = write_path(calls)
    print(f"plain save(): {total:g} calls to dynamo_app functions in {len(modules)} modules")
    print(f"write path: {len(path)} modules ({', '.join(path)}), the rest encodes the item")
    for module in modules:
        count = sum(n for (m, _), n in calls.items() if m == module) / SAVES
        print(f"  {module:20} {count:g}")
        if "--calls" in argv:
            for (m, function), n in sorted(calls.items()):
                if m == module:
                    print(f"      {function:40} {n / SAVES:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
