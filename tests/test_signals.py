"""dynamo_app.signals: what each write path sends, counted by a receiver that records."""

import pytest
from django.db.models import signals as orm_signals

import dynamo_app
from dynamo_app import models, signals
from dynamo_app.exceptions import AlreadyExists, ConditionFailed, UniqueViolation
from dynamo_app.models import Attr


class Song(models.Model):
    album = models.StringField(partition_key=True)
    title = models.StringField(sort_key=True)
    plays = models.IntegerField(default=0)
    slug = models.StringField(null=True)
    catalog = models.IntegerField(null=True)

    class Meta:
        table_name = "sig_song"
        unique = [models.Unique("catalog")]

    def save(self, **kwargs):
        self.slug = self.title.lower().replace(" ", "-")  # an override, as Django users write
        super().save(**kwargs)


SIGNALS = {
    "pre_save": signals.pre_save,
    "post_save": signals.post_save,
    "pre_delete": signals.pre_delete,
    "post_delete": signals.post_delete,
}


@pytest.fixture
def sent():
    """Every signal sent for Song: (name, title, arguments other than signal/sender/instance)."""
    log = []

    def receivers():
        for name, signal in SIGNALS.items():

            def record(sender, instance, signal, name=name, **arguments):
                assert sender is Song and isinstance(instance, Song)
                log.append((name, instance.title, arguments))

            signal.connect(record, sender=Song, weak=False, dispatch_uid=f"test-{name}")
            yield signal, name

    connected = list(receivers())
    yield log
    for signal, name in connected:
        signal.disconnect(sender=Song, dispatch_uid=f"test-{name}")


def names(log):
    return [entry[0] for entry in log]


def test_create_goes_through_save_and_sends_pre_and_post_save(dynamo_db, sent):
    song = Song.objects.create(album="a", title="Blue Moon")
    assert song.slug == "blue-moon"  # the overridden save() ran
    assert Song.objects.get(album="a", title="Blue Moon").slug == "blue-moon"
    assert sent == [
        ("pre_save", "Blue Moon", {"update_fields": None}),
        ("post_save", "Blue Moon", {"created": True, "update_fields": None}),
    ]


def test_save_says_created_for_a_new_instance_only(dynamo_db, sent):
    song = Song(album="a", title="One")
    song.save()
    song.plays = 3
    song.save()
    stored = Song.objects.get(album="a", title="One")
    stored.save()
    assert [e[2] for e in sent if e[0] == "post_save"] == [
        {"created": True, "update_fields": None},
        {"created": False, "update_fields": None},
        {"created": False, "update_fields": None},
    ]
    assert names(sent) == ["pre_save", "post_save"] * 3


def test_a_pre_save_receiver_changes_what_is_written(dynamo_db):
    def count(sender, instance, **kwargs):
        instance.plays += 100

    signals.pre_save.connect(count, sender=Song)
    try:
        assert Song.objects.create(album="a", title="Loud").plays == 100
        song = Song.objects.get(album="a", title="Loud")
        song.plays = 1
        song.save(update_fields=["plays"])
    finally:
        signals.pre_save.disconnect(count, sender=Song)
    assert Song.objects.get(album="a", title="Loud").plays == 101  # 0 + 100, then 1 + 100


def test_update_fields_update_and_increment_name_the_fields(dynamo_db, sent):
    song = Song.objects.create(album="a", title="Two")
    sent.clear()
    song.plays = 5
    song.save(update_fields=["plays"])
    song.update(add={"plays": 1}, set={"slug": "two"})
    Song.objects.increment(album="a", title="Two", plays=1)
    assert sent == [
        ("pre_save", "Two", {"update_fields": frozenset({"plays"})}),
        ("post_save", "Two", {"created": False, "update_fields": frozenset({"plays"})}),
        ("pre_save", "Two", {"update_fields": frozenset({"plays", "slug"})}),
        ("post_save", "Two", {"created": False, "update_fields": frozenset({"plays", "slug"})}),
        ("pre_save", "Two", {"update_fields": frozenset({"plays"})}),
        ("post_save", "Two", {"created": False, "update_fields": frozenset({"plays"})}),
    ]


def test_delete_sends_pre_and_post_delete(dynamo_db, sent):
    song = Song.objects.create(album="a", title="Gone", catalog=1)
    sent.clear()
    song.delete()
    assert sent == [("pre_delete", "Gone", {}), ("post_delete", "Gone", {})]


def test_a_failed_write_sends_its_pre_signal_and_no_post_signal(dynamo_db, sent):
    song = Song.objects.create(album="a", title="Three", catalog=3)
    sent.clear()
    with pytest.raises(AlreadyExists):
        Song.objects.create(album="a", title="Three")
    with pytest.raises(UniqueViolation):
        Song.objects.create(album="a", title="Four", catalog=3)
    with pytest.raises(ConditionFailed):
        song.delete(condition=Attr("plays") > 10)
    assert names(sent) == ["pre_save", "pre_save", "pre_delete"]


def test_a_transaction_sends_post_signals_after_its_commit(dynamo_db, sent):
    old = Song.objects.create(album="b", title="Old")
    kept = Song.objects.create(album="b", title="Kept")
    checked = Song.objects.create(album="b", title="Checked")
    sent.clear()
    with dynamo_app.transaction() as tx:
        tx.create(Song(album="b", title="New"))
        tx.update(kept, add={"plays": 2})
        tx.delete(old)
        tx.condition_check(checked, Attr("plays") >= 0)
        assert names(sent) == ["pre_save", "pre_save", "pre_delete"]  # nothing sent yet
    assert sent[3:] == [
        ("post_save", "New", {"created": True, "update_fields": None}),
        ("post_save", "Kept", {"created": False, "update_fields": frozenset({"plays"})}),
        ("post_delete", "Old", {}),
    ]


def test_a_failed_or_abandoned_transaction_sends_no_post_signal(dynamo_db, sent):
    Song.objects.create(album="c", title="Taken", catalog=7)
    sent.clear()
    with pytest.raises(UniqueViolation), dynamo_app.transaction() as tx:
        tx.create(Song(album="c", title="Other", catalog=7))
        tx.save(Song(album="c", title="Fine"))
    with pytest.raises(RuntimeError), dynamo_app.transaction() as tx:
        tx.save(Song(album="c", title="Never"))
        raise RuntimeError("the block fails: nothing is sent")
    assert names(sent) == ["pre_save", "pre_save", "pre_save"]
    assert [s.title for s in Song.objects.filter(album="c")] == ["Taken"]


@pytest.fixture
def raising_then_recording():
    """A post_save receiver that raises for the song 'A', connected before one that records."""
    heard = []

    def refuse_a(sender, instance, **kwargs):
        if instance.title == "A":
            raise ValueError("refused A")

    def record(sender, instance, **kwargs):
        heard.append(instance.title)

    for uid, receiver in (("raise", refuse_a), ("record", record)):
        signals.post_save.connect(receiver, sender=Song, weak=False, dispatch_uid=uid)
    yield heard
    for uid in ("raise", "record"):
        signals.post_save.disconnect(sender=Song, dispatch_uid=uid)


def test_a_raising_receiver_stops_no_other_after_a_committed_transaction(
    dynamo_db, raising_then_recording
):
    with pytest.raises(ValueError, match="refused A"), dynamo_app.transaction() as tx:
        for title in ("A", "B", "C"):
            tx.create(Song(album="r", title=title))
    assert raising_then_recording == ["A", "B", "C"]  # every receiver, every committed write
    assert [s.title for s in Song.objects.filter(album="r")] == ["A", "B", "C"]


def test_a_raising_receiver_stops_no_other_after_a_single_write(dynamo_db, raising_then_recording):
    with pytest.raises(ValueError, match="refused A") as error:
        Song.objects.create(album="r", title="A")
    assert raising_then_recording == ["A"]  # the receiver after the raising one ran
    assert Song.objects.get(album="r", title="A")  # written: only the receiver failed
    assert not hasattr(error.value, "__notes__")


def test_every_raising_receiver_is_reported_once_all_have_run(dynamo_db, raising_then_recording):
    def refuse_b(sender, instance, **kwargs):
        if instance.title == "B":
            raise KeyError("refused B")

    signals.post_save.connect(refuse_b, sender=Song, weak=False, dispatch_uid="raise-b")
    try:
        with pytest.raises(ValueError, match="refused A") as error, dynamo_app.transaction() as tx:
            for title in ("A", "B"):
                tx.create(Song(album="r", title=title))
    finally:
        signals.post_save.disconnect(sender=Song, dispatch_uid="raise-b")
    assert error.value.__notes__ == ["Another post_* receiver raised, too: KeyError('refused B')"]
    assert raising_then_recording == ["A", "B"]


def test_bulk_operations_send_no_signals(dynamo_db, sent):
    songs = [Song(album="d", title=f"T{i}", catalog=100 + i) for i in range(3)]
    Song.objects.bulk_save(songs)
    Song.objects.bulk_delete(songs)
    assert sent == []


def test_django_orm_signals_are_not_sent(dynamo_db):
    heard = []

    def any_model(sender, **kwargs):
        heard.append(sender)

    orm_signals.pre_save.connect(any_model)
    orm_signals.post_delete.connect(any_model)
    try:
        Song.objects.create(album="e", title="Quiet").delete()
    finally:
        orm_signals.pre_save.disconnect(any_model)
        orm_signals.post_delete.disconnect(any_model)
    assert heard == []
