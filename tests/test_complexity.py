"""No function of the package holds more than one idea: radon's cyclomatic complexity.

A rule that grows (a new DynamoDB feature, a new refusal) goes into a function of its
own, collected with its siblings, as Django's ``Model.check()`` collects ``_check_*``.
Rank E (31 and above) fails always; rank D (21 to 30) only outside ``ARGUED``.
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_rank, cc_visit
from radon.visitors import Function

import dynamo_app

# "module path:qualified name" -> why the function is one idea despite its branches.
# Empty: every function is at rank C or better. Add an entry only with its argument.
ARGUED: dict[str, str] = {}


def ranked_functions() -> dict[str, tuple[str, int]]:
    package = Path(dynamo_app.__file__).parent
    found = {}
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package.parent).as_posix()
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if isinstance(block, Function):
                name = f"{block.classname}.{block.name}" if block.is_method else block.name
                found[f"{module}:{name}"] = (cc_rank(block.complexity), block.complexity)
    return found


def test_no_function_at_rank_e_and_each_d_argued() -> None:
    ranked = ranked_functions()
    assert ranked, "radon found no functions: the package path is wrong"
    too_complex = {n: c for n, (rank, c) in ranked.items() if rank in "EF"}
    unargued = {n: c for n, (rank, c) in ranked.items() if rank == "D" and n not in ARGUED}
    assert too_complex == {}, "split these along their concerns"
    assert unargued == {}, "split these, or argue them in ARGUED"
    assert set(ARGUED) <= {n for n, (rank, _) in ranked.items() if rank == "D"}, (
        "ARGUED names a function that is no longer at rank D: drop it"
    )
