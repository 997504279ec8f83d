"""A plain ``save()`` crosses a budgeted number of modules (bin/save_path.py's
measure, run here against the suite's server; ``python bin/save_path.py --calls``
lists every call).

The budget is 8: the app's own path, models.base -> models.writes ->
client.handle -> client.retry, then signals (the one home of the rule that every
post_save receiver runs and a raising one is reported after all have), and the
three stand-ins botocore runs inside the request, one per part of it that they
replace (client.pipeline: the endpoint; client.sigv4: the signature;
client.parser: the response). With ``DYNAMO["FAST_CLIENT"]`` off botocore signs
and resolves, and the path is 6 (client.parser: botocore's parser behind the
x-amz-crc32 check). A module more on the path is a decision to take here, not a
drift.
"""

import importlib.util
from pathlib import Path

from dynamo_app import models
from dynamo_app.client.handle import Handle

WRITE_PATH_BUDGET = 8

SCRIPT = Path(__file__).resolve().parent.parent / "bin" / "save_path.py"
_spec = importlib.util.spec_from_file_location("save_path", SCRIPT)
save_path = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(save_path)

# Handle.call as a project has it: tests/conftest.py wraps it in every test with
# a recorder that calls into dynamo_app.client.requests, which a user's save() does not.
USERS_CALL = Handle.call


class PathNote(models.Model):
    team_id = models.StringField(partition_key=True)
    note_id = models.StringField(sort_key=True)
    text = models.StringField()


def test_a_plain_save_stays_within_its_module_budget(dynamo_db, monkeypatch):
    monkeypatch.setattr(Handle, "call", USERS_CALL)
    note = PathNote(team_id="t", note_id="n", text="hello")
    note.save()  # first use builds the client and the codec: not the path

    path = save_path.write_path(save_path.calls_by_function(save_path.profile(note.save, 3)))
    # On another engine the run's store watches what this process sends
    # (dynamo_app.test.sent): the test run's, not the save's.
    path = [module for module in path if not module.startswith("test.")]

    # the profile saw the save
    assert {"models.base", "models.writes", "client.handle"} <= set(path)
    assert len(path) <= WRITE_PATH_BUDGET, (
        f"a plain save() crosses {len(path)} modules, over its budget of "
        f"{WRITE_PATH_BUDGET}: {', '.join(path)} (python bin/save_path.py --calls)"
    )
