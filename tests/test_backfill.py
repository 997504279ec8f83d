"""Backfills: parallel segments, conditioned writes, checkpoints that survive a kill."""

import io
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from dynamo_app.app_tables import CHECKPOINTS
from dynamo_app.client.handle import get_handle
from dynamo_app.data import backfill
from dynamo_app.exceptions import OutcomeUnknown
from dynamo_app.testing import count_requests
from tests.backfill_support import Article, slugify, touch
from tests.fault_support import Lost
from tests.process_support import ROOT, child_environ


def articles(n):
    Article.objects.bulk_save(Article(article_id=f"a{i:03d}", title=f"Title {i}") for i in range(n))


def stored():
    return {a.article_id: a for a in Article.objects.scan()}


def checkpoints():
    handle = get_handle()
    return handle.call("scan", TableName=handle.table_name(CHECKPOINTS.declared_name))["Items"]


def test_every_item_once_in_parallel_segments_and_a_second_run_does_nothing(dynamo_db):
    articles(30)
    result = backfill.run(Article, slugify, segments=3)
    assert (result.seen, result.changed, result.skipped, result.conflicts) == (30, 30, 0, 0)
    assert all(a.slug == a.title.lower().replace(" ", "-") for a in stored().values())
    assert len(checkpoints()) == 3
    with count_requests() as counter:
        again = backfill.run(Article, slugify, segments=3)
    assert counter == {"GetItem": 3}  # each segment's checkpoint says: done
    assert str(again) == str(result)
    fresh = backfill.run(Article, slugify, segments=3, restart=True)
    assert (fresh.seen, fresh.changed, fresh.skipped) == (30, 0, 30)


def test_killed_mid_run_and_resumed_changes_every_item_exactly_once(dynamo_db, monkeypatch):
    monkeypatch.setattr(backfill, "PAGE_SIZE", 4)
    articles(25)

    class Killed(BaseException):
        pass

    calls = 0

    def dies_on_the_14th(article: Article) -> None:
        nonlocal calls
        calls += 1
        if calls == 14:  # mid-page: items 13..16; 13 was written, 14 was not
            raise Killed
        touch(article)

    with pytest.raises(Killed):
        backfill.run(Article, dies_on_the_14th, name="touch")
    assert sum(a.touched for a in stored().values()) == 13
    result = backfill.run(Article, touch, name="touch")
    assert sorted({a.touched for a in stored().values()}) == [1]  # never twice
    assert (result.seen, result.changed, result.skipped, result.conflicts) == (25, 25, 0, 0)


def test_a_concurrent_edit_is_a_conflict_never_overwritten(dynamo_db):
    articles(3)

    def raced(article: Article) -> None:
        if article.article_id == "a001":  # someone else edits it after our read
            Article.objects.get(article_id="a001").update(set={"title": "Theirs"})
        slugify(article)

    result = backfill.run(Article, raced)
    assert (result.changed, result.conflicts) == (2, 1)
    theirs = stored()["a001"]
    assert (theirs.title, theirs.slug, theirs.touched) == ("Theirs", None, 0)
    assert backfill.run(Article, slugify, name="again").changed == 1  # a re-run picks it up


def test_a_concurrent_delete_is_a_conflict_and_the_run_goes_on(dynamo_db):
    articles(3)

    def raced(article: Article) -> None:
        if article.article_id == "a001":  # someone else deletes it after our read
            Article.objects.get(article_id="a001").delete()
        slugify(article)

    result = backfill.run(Article, raced)
    assert (result.seen, result.changed, result.conflicts) == (3, 2, 1)
    assert sorted(stored()) == ["a000", "a002"]  # not written back


def test_an_item_whose_answer_was_lost_is_counted_changed_once(no_sleep):
    """The item + checkpoint transaction applied, its answer lost: where the token
    answers the repeat it is done; where it is ignored (moto) the repeat fails on
    our own write, and the checkpoint it carried says it was written."""
    articles(3)
    with count_requests() as counter, Lost("TransactWriteItems") as lost:
        result = backfill.run(Article, touch)
    assert lost.applied == 1
    assert (result.seen, result.changed, result.conflicts) == (3, 3, 0)  # not a conflict
    assert [a.touched for a in stored().values()] == [1, 1, 1]
    assert counter["TransactWriteItems"] == 4 and counter["GetItem"] <= 2  # + the settling read


def test_an_item_whose_outcome_stays_unknown_stops_the_run_and_a_rerun_resumes(no_sleep):
    articles(3)
    attempts = no_sleep.settings.retry.max_attempts
    with Lost("TransactWriteItems", times=attempts, reaches=False) as lost:
        with pytest.raises(OutcomeUnknown):
            backfill.run(Article, touch)
    assert lost.lost == attempts and lost.applied == 0
    assert [a.touched for a in stored().values()] == [0, 0, 0]  # the checkpoint says: not written
    result = backfill.run(Article, touch)
    assert (result.seen, result.changed, result.conflicts) == (3, 3, 0)
    assert [a.touched for a in stored().values()] == [1, 1, 1]


def test_requests_one_transaction_per_changed_item(dynamo_db):
    articles(10)
    Article.objects.get(article_id="a003").update(set={"slug": "x"})
    with count_requests() as counter:
        result = backfill.run(Article, slugify)
    assert (result.changed, result.skipped) == (9, 1)
    # checkpoint read, one Scan page, 9 item+checkpoint transactions, the page's checkpoint
    assert counter == {"GetItem": 1, "Scan": 1, "TransactWriteItems": 9, "PutItem": 1}


def test_max_capacity_sleeps_to_the_budget(dynamo_db, monkeypatch):
    articles(10)
    slept = []
    monkeypatch.setattr(backfill.time, "sleep", slept.append)
    backfill.run(Article, slugify, max_capacity=2)
    # 10 items written, each 2 actions at 2 units a KB: at least 40 units at 2 a second
    assert sum(slept) >= 15


def test_command_reads_the_model_from_the_annotation(dynamo_db):
    articles(5)
    out, err = io.StringIO(), io.StringIO()
    call_command("dynamo_backfill", "tests.backfill_support.slugify", stdout=out, stderr=err)
    assert "5 seen, 5 changed, 0 skipped, 0 conflicts" in out.getvalue()
    assert "tests.backfill_support.slugify" in err.getvalue()  # the progress / final line
    with pytest.raises(CommandError, match="annotate its first parameter"):
        call_command("dynamo_backfill", "tests.backfill_support.unannotated")
    out = io.StringIO()
    call_command(
        "dynamo_backfill", "tests.backfill_support.unannotated", model="Article", stdout=out
    )
    assert "5 changed" in out.getvalue()
    with pytest.raises(CommandError, match="segment and total_segments go together"):
        call_command("dynamo_backfill", "tests.backfill_support.slugify", segment=1)


def test_four_worker_processes_split_the_table(dynamo_db):
    articles(40)
    env = child_environ(DJANGO_SETTINGS_MODULE="tests.backfill_settings")
    command = [sys.executable, "-m", "django", "dynamo_backfill", "tests.backfill_support.slugify"]
    workers = [
        subprocess.Popen(
            [*command, "--segment", str(i), "--total-segments", "4"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    outputs = [w.communicate(timeout=120) for w in workers]
    assert [w.returncode for w in workers] == [0] * 4, outputs
    seen = [int(out.split(": ")[1].split(" seen")[0]) for out, _ in outputs]
    assert sum(seen) == 40 and all(seen), seen  # disjoint slices covering the table
    assert sorted({a.touched for a in stored().values()}) == [1]
    assert all(a.slug for a in stored().values())
    assert len(checkpoints()) == 4
