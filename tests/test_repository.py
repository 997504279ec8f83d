"""The repository stands alone: nothing in it points to a file outside it (a
design note, a work folder) that a reader of a clone cannot open."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("dynamo_app", "tests", "bin", "benchmarks", "project", "docs")
TOP = ("README.md", "CHANGELOG.md", "pyproject.toml", "requirements.txt", "manage.py")
# Written in pieces, so this file does not hold them itself.
OUTSIDE = ("DESIGN" + ".md", "/work" + "/", "../" + "shared/")


def _texts() -> list[Path]:
    files = [ROOT / name for name in TOP if (ROOT / name).exists()]
    for part in PARTS:
        files += [
            p
            for p in (ROOT / part).rglob("*")
            if p.is_file() and p.suffix in {".py", ".md", ".html", ".txt", ""}
        ]
    return files


@pytest.mark.parametrize("pointer", OUTSIDE)
def test_no_pointer_to_a_file_outside_the_repository(pointer: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _texts()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if pointer in line
    ]
    assert not found, f"{pointer!r} points outside the repository: {', '.join(found)}"
