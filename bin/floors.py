"""Print requirements.txt with the package's own dependencies at their declared floors.

bin/test's floor leg installs this list: each dependency that pyproject.toml
declares (the runtime ones and the extras named on the command line) pinned to
the lowest version its ``>=`` admits, everything else as requirements.txt pins
it. pip resolves to the newest versions it can and has no "lowest" mode, so the
pins are made here; what they pull in stays at its newest.

    python bin/floors.py local drf dax debug-toolbar > floors.txt
"""

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def floor(requirement: str) -> tuple[str, str]:
    """(canonical name, the pin at its floor) of a ``name[extras]>=x,<y`` requirement."""
    match = NAME.match(requirement)
    if match is None:
        sys.exit(f"pyproject.toml: {requirement!r} is not a requirement")
    rest = requirement[match.end() :]
    extras, _, bounds = rest.partition("]") if rest.startswith("[") else ("", "", rest)
    extras = f"{extras}]" if extras else ""
    lows = [b.strip()[2:].strip() for b in bounds.split(",") if b.strip().startswith(">=")]
    if len(lows) != 1:
        sys.exit(f"pyproject.toml: {requirement!r} declares no floor (>=): give it one")
    return canonical(match.group()), f"{match.group()}{extras}=={lows[0]}"


def main(extras: list[str]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    declared = list(project["dependencies"])
    for extra in extras:
        if extra not in optional:
            sys.exit(f"pyproject.toml has no extra {extra!r}; it has {sorted(optional)}")
        declared += optional[extra]
    own = canonical(project["name"])  # [test] names the package itself, with [local]
    pins = dict(floor(r) for r in declared if not canonical(r).startswith(f"{own}["))
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        name = NAME.match(line)
        if name and canonical(name.group()) in pins:
            continue
        print(line)
    print(*pins.values(), sep="\n")


if __name__ == "__main__":
    main(sys.argv[1:])
