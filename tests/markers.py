"""Markers of this suite's own (not part of ``dynamo_app.testing``'s public surface)."""

import pytest

from dynamo_app.testing import ENGINE

# bin/test runs the suite on three legs; the MiniStack leg exists to try the engine.
# Tests that start whole projects in processes of their own, on servers of their own
# (their environment drops the leg's engine choice), would only repeat the moto legs
# there, at a minute or more of the 15-minute budget.
own_processes = pytest.mark.skipif(
    ENGINE != "moto",
    reason="runs whole processes on servers of their own, not on the engine this leg selects",
)
