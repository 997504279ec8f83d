"""``python -m benchmarks --quick`` keeps working (its numbers are not checked here)."""

import pytest

from benchmarks.__main__ import main


@pytest.mark.django_db
def test_quick_benchmarks_run(capsys: pytest.CaptureFixture[str], dynamo_server: object) -> None:
    sections = {s.title[0]: s for s in main(["--quick", "--repeat", "1"])}
    assert sorted(sections) == ["1", "2", "3", "4", "5", "6", "7"]
    operations = {row[0]: row[1] for row in sections["2"].rows}
    assert all(requests.startswith("1 ") for requests in operations.values())
    contention = sections["6"].rows[0]
    assert contention[-1] == "clean"
    # The threads' requests count for the benchmark's block: one or more per attempt.
    assert int(contention[5]) >= int(contention[0])
    assert "### 1. Codec" in capsys.readouterr().out
