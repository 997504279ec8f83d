"""dynamo_dump / dynamo_load: a round trip keeps every item, version and lock."""

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.management import CommandError, call_command
from django.core.validators import MaxValueValidator

from dynamo_app import models
from dynamo_app.client.handle import get_handle
from dynamo_app.data.dumpload import load, load_fixture, record
from dynamo_app.data.integrity import check_unique
from dynamo_app.data.progress import Progress
from dynamo_app.exceptions import LoadError, QueryError
from dynamo_app.testing import count_requests
from dynamo_app.unique import LOCK_TABLE
from tests.fault_support import Intercepted, Lost, answer

FIXTURES = Path(__file__).parent / "fixtures"


class Member(models.Model):
    club = models.StringField(partition_key=True)
    member_id = models.StringField(sort_key=True)
    name = models.StringField()
    number = models.IntegerField(null=True)
    balance = models.DecimalField(default=Decimal(0))
    photo = models.BinaryField(null=True)
    roles = models.StringSetField()
    version = models.VersionField()

    class Meta:
        table_name = "dl_member"
        unique = [models.Unique("number", within="club")]


class Note(models.Model):
    note_id = models.StringField(partition_key=True)
    body = models.StringField()
    at = models.DateTimeField(null=True)

    class Meta:
        table_name = "dl_note"


class Review(models.Model):
    review_id = models.StringField(partition_key=True)
    stars = models.IntegerField(validators=[MaxValueValidator(5)])
    kind = models.StringField(choices=[("book", "Book"), ("film", "Film")])
    text = models.StringField(null=True)

    class Meta:
        table_name = "dl_review"

    def clean(self):
        if self.stars < 2 and not self.text:
            raise DjangoValidationError({"text": "A low rating needs a text."})


def scan(model):
    return sorted(json.dumps(record(o), sort_keys=True) for o in model.objects.scan())


def locks():
    handle = get_handle()
    items = handle.call("scan", TableName=handle.table_name(LOCK_TABLE))["Items"]
    return sorted(json.dumps(item, sort_keys=True) for item in items)


def populate():
    for i in range(20):
        member = Member.objects.create(
            club=f"c{i % 3}",
            member_id=f"m{i:02d}",
            name=f"Name {i}",
            number=i if i % 5 else None,
            balance=Decimal(f"12345678901234567890.1234567890123456{i:02d}"),
            photo=bytes([i, 0, 255]),
            roles={"a", f"r{i}"},
        )
        if i % 4 == 0:
            member.name += " (renamed)"
            member.save()  # version 2
    Note.objects.bulk_save(Note(note_id=f"n{i}", body="x" * i) for i in range(6))
    handle = get_handle()  # an attribute the model does not declare, written by other code
    handle.call(
        "update_item",
        TableName=handle.table_name("dl_note"),
        Key={"note_id": {"S": "n1"}},
        UpdateExpression="SET legacy = :v",
        ExpressionAttributeValues={":v": {"M": {"b": {"B": b"\x01"}, "n": {"N": "1.50"}}}},
    )


def dump_text(*labels, segments=1):
    out, err = io.StringIO(), io.StringIO()
    call_command("dynamo_dump", *labels, segments=segments, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_one_item_is_said_in_the_singular(dynamo_db, tmp_path):
    Member.objects.create(club="c", member_id="m", name="One", roles={"a"})
    text, err = dump_text("test_dumpload.Member")
    assert "Dumped 1 item of 1 model to stdout in " in err
    path = tmp_path / "one.jsonl"
    path.write_text(text)
    said = io.StringIO()
    call_command("dynamo_load", str(path), stderr=said)
    assert "Loaded 0 items in " in said.getvalue() and "; 1 was already there." in said.getvalue()


def test_dump_empty_load_gives_identical_items_and_locks(dynamo_db, dynamo_server, tmp_path):
    populate()
    before = {Member: scan(Member), Note: scan(Note)}
    held = locks()
    assert len(held) == 16  # numbers 1..19 except multiples of 5

    text, err = dump_text("test_dumpload.Member", "test_dumpload.Note", segments=3)
    assert len(text.splitlines()) == 26
    assert "Dumped 26 items of 2 models" in err and "Member 20" in err
    path = tmp_path / "dump.jsonl"
    path.write_text(text)

    dynamo_server.empty()
    assert scan(Member) == [] and locks() == []
    err = io.StringIO()
    call_command("dynamo_load", str(path), stderr=err)
    assert "Loaded 26 items" in err.getvalue()

    assert scan(Member) == before[Member]  # versions included
    assert scan(Note) == before[Note]  # the undeclared attribute too
    assert Note.objects.get(note_id="n1").extra_attributes == {
        "legacy": {"b": b"\x01", "n": Decimal("1.50")}
    }
    assert locks() == held  # the same lock items, owners included
    report = check_unique()
    assert report.clean and report.locks_checked == 16
    out = io.StringIO()
    call_command("dynamo_check_unique", stdout=out)
    assert "0 missing, 0 orphan, 0 duplicate" in out.getvalue()


def test_a_load_run_again_resumes_and_counts_what_was_there(dynamo_db, dynamo_server):
    populate()
    text, _ = dump_text("test_dumpload.Member")
    lines = text.splitlines()
    dynamo_server.empty()
    first = load(lines[:17])  # as if killed after line 17
    assert first.loaded == 17
    again = load(lines)
    assert (again.loaded, again.present) == (3, 17)
    assert check_unique().clean and len(locks()) == 16


def test_a_bad_line_stops_the_load_with_its_number(dynamo_db):
    good = json.dumps(record(Note(note_id="n1", body="b")))
    lines = [good, "", '{"model": "nope", "fields": {}}', good]
    with pytest.raises(LoadError) as error:
        load(lines)
    assert error.value.line == 3 and "line 3: no model 'nope'" in str(error.value)

    bad_value = good.replace('"body": "b"', '"body": 7')
    result = load([good, "not json", bad_value, good], skip_invalid=True)
    assert result.invalid == [2, 3] and result.loaded == 2
    with pytest.raises(CommandError, match="line 2"):
        call_command("dynamo_load", "-", stdin=io.StringIO(f"{good}\n{{}}\n"))


def review(review_id, stars, kind="book", text=None):
    return json.dumps(record(Review(review_id=review_id, stars=stars, kind=kind, text=text)))


def test_a_line_naming_an_unknown_field_says_which_in_the_singular(dynamo_db):
    line = json.loads(review("r1", 4))
    line["fields"]["mood"] = "happy"
    with pytest.raises(LoadError, match=r"line 1: Review has no field mood\. Fix"):
        load([json.dumps(line)])


REVIEWS = [
    review("r1", 4),
    review("r2", 9),  # over the validator's 5
    review("r3", 3, kind="song"),  # not a choice
    review("r4", 1),  # the model's clean(): a low rating needs a text
    review("r5", 1, text="dull"),
]


def test_what_save_stored_loads_back_by_default_though_full_clean_refuses_it(dynamo_db):
    """A dump is the app's own data: a restore must not stop on what save() stored."""
    for line in REVIEWS:
        Review.from_dict(json.loads(line)["fields"]).save()
    dumped = scan(Review)
    Review.objects.bulk_delete(list(Review.objects.scan()))
    assert load(REVIEWS).loaded == 5 and scan(Review) == dumped
    with pytest.raises(CommandError, match="leave out --strict"):
        call_command("dynamo_load", "-", "--strict", stdin=io.StringIO(REVIEWS[1] + "\n"))


def test_a_strict_load_of_an_invalid_file_loads_nothing_and_names_every_bad_line_and_field(
    dynamo_db, tmp_path
):
    """With --strict, full_clean() on every line first (validators, choices, the
    model's clean())."""
    lines = REVIEWS
    with count_requests() as counter, pytest.raises(LoadError) as error:
        load((line for line in lines), strict=True)  # a generator is kept to be read again
    assert counter.total == 0 and list(Review.objects.scan()) == []
    assert error.value.line == 2 and [n for n, _ in error.value.problems] == [2, 3, 4]
    message = str(error.value)
    assert "3 lines cannot be loaded, so nothing was written" in message
    assert "line 2: field stars: Ensure this value is less than or equal to 5." in message
    assert ".;" not in message and ".." not in message  # one full stop per sentence
    assert "line 3: field kind: Value 'song' is not a valid choice." in message
    assert "line 4: field text: A low rating needs a text." in message
    path = tmp_path / "reviews.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CommandError, match=f"^{path}: 3 line"):
        call_command("dynamo_load", str(path), "--strict", stderr=io.StringIO())

    result = load(lines, strict=True, skip_invalid=True)
    assert (result.loaded, result.invalid) == (2, [2, 3, 4])
    assert sorted(r.review_id for r in Review.objects.scan()) == ["r1", "r5"]


def test_an_empty_value_is_judged_by_null_not_blank(dynamo_db):
    """A None in a null=True field is stored data (save() wrote it), not a form
    left blank: it loads, as it was dumped, strict or not."""
    assert load([review("r1", 4, text=None)], strict=True).loaded == 1
    assert Review.objects.get(review_id="r1").text is None


def test_a_refused_line_stops_the_load_with_every_line_before_it_loaded(dynamo_db):
    """Lines are written in file order: before, a batch of another model still
    waiting was left unwritten while the error said the lines before were."""
    Member.objects.create(club="c", member_id="taken", name="T", number=1)
    lines = [json.dumps(record(Note(note_id="n1", body="b")))]  # line 1, another model
    members = [Member(club="c", member_id=f"m{i}", name="n", number=i) for i in range(50)]
    lines += [json.dumps(record(m)) for m in members]  # lines 2-51: a batch of 50, sent full
    with pytest.raises(LoadError) as error:
        load(lines)
    assert error.value.line == 3 and "number=1 is already taken" in str(error.value)
    assert "the lines before it are loaded (2 written" in str(error.value)
    assert Note.objects.get(note_id="n1").body == "b"
    assert [m.member_id for m in Member.objects.filter(club="c")] == ["m0", "taken"]


class Unprocessed(Intercepted):
    """BatchWriteItem answered with everything unprocessed (DynamoDB throttling
    the batch), after the first ``after`` requests went through."""

    def __init__(self, after):
        super().__init__("BatchWriteItem")
        self.after, self.seen = after, 0

    def send(self, request, **kwargs):
        self.seen += 1
        if self.seen <= self.after:
            return None
        body = json.dumps({"UnprocessedItems": json.loads(request.body)["RequestItems"]})
        return answer(200, body.encode())


def test_a_load_stopped_by_throttling_says_which_lines_are_loaded(no_sleep):
    lines = [json.dumps(record(Note(note_id=f"n{i:03d}", body="b"))) for i in range(150)]
    with Unprocessed(after=4), pytest.raises(LoadError) as error:  # 4 requests: lines 1-100
        load(lines, source="notes.jsonl")
    message = str(error.value)
    assert error.value.line == 101 and "BatchIncomplete" not in message
    assert "notes.jsonl: writing lines 101-150 (Note) failed" in message
    assert "still unprocessed after 5 rounds" in message
    assert "The lines before line 101 are loaded (100 written, 0 found already there)" in message
    assert "not loaded: lines 101-150; no line after 150 was sent" in message
    assert len(list(Note.objects.scan())) == 100
    assert load(lines).loaded == 150  # run again: whole-item puts, the same items
    assert len(list(Note.objects.scan())) == 150


def test_a_load_stopped_mid_batch_names_the_lines_written_and_not(no_sleep):
    lines = [json.dumps(record(Note(note_id=f"n{i:03d}", body="b"))) for i in range(150)]
    with Unprocessed(after=5), pytest.raises(LoadError) as error:  # lines 1-125 go through
        load(lines, source="notes.jsonl")
    message = str(error.value)
    assert "loaded: lines 101-125; not loaded: lines 126-150; no line after 150" in message
    stored = sorted(n.note_id for n in Note.objects.scan())
    assert stored == [f"n{i:03d}" for i in range(125)]


def test_an_undeclared_attribute_is_checked_too_and_a_bad_one_loads_nothing(dynamo_db):
    lines = [json.dumps(record(Note(note_id=f"n{i:02d}", body="b"))) for i in range(31)]
    bad = json.loads(lines[25])
    bad["extra"] = {"legacy": {"N": "abc"}}
    lines[25] = json.dumps(bad)
    nested = json.loads(lines[27])
    nested["extra"] = {"tags": {"NS": []}}
    lines[27] = json.dumps(nested)
    with pytest.raises(LoadError) as error:
        load(lines)
    message = str(error.value)
    assert "2 lines cannot be loaded, so nothing was written" in message
    assert "line 26: \"extra\" attribute 'legacy' holds {'N': 'abc'}" in message
    assert "line 28: \"extra\" attribute 'tags'" in message
    assert list(Note.objects.scan()) == []


def test_a_lost_answer_mid_load_is_loaded_not_found_already_there(no_sleep):
    members = [Member(club="c", member_id=f"m{i}", name="n", number=i) for i in range(10)]
    with Lost("TransactWriteItems"):
        result = load([json.dumps(record(m)) for m in members])
    assert (result.loaded, result.present) == (10, 0)
    assert check_unique().clean and len(locks()) == 10


def test_a_taken_unique_value_is_a_bad_line(dynamo_db):
    Member.objects.create(club="c", member_id="m1", name="A", number=7)
    clash = Member(club="c", member_id="m2", name="B", number=7)
    with pytest.raises(LoadError) as error:
        load([json.dumps(record(clash))])
    assert error.value.line == 1 and "number=7 is already taken" in str(error.value)
    result = load([json.dumps(record(clash))], skip_invalid=True)
    assert result.invalid == [1] and check_unique().clean


def test_requests_per_item(dynamo_db):
    lines = [json.dumps(record(Note(note_id=f"n{i}", body="b"))) for i in range(100)]
    with count_requests() as counter:
        load(lines)
    assert counter == {"BatchWriteItem": 4}  # 25 a request
    members = [Member(club="c", member_id=f"m{i}", name="n", number=i) for i in range(100)]
    with count_requests() as counter:
        load([json.dumps(record(m)) for m in members])
    assert counter == {"TransactWriteItems": 2}  # item + lock, 100 actions a transaction
    with count_requests() as counter:
        dump_text("test_dumpload.Note")
    assert counter == {"DescribeTable": 1, "Scan": 1}


def test_a_dump_file_as_a_test_fixture(dynamo_db):
    """load_fixture() in a test's setup, as Django's loaddata (a django.test.TestCase
    setUp does the same: its tables are made before setUp runs)."""
    result = load_fixture(FIXTURES / "members.jsonl")
    assert (result.loaded, result.present) == (2, 0)
    assert Member.objects.get(club="c1", member_id="m2").number == 8
    assert Member.objects.get(club="c1", member_id="m1").version == 3
    assert check_unique().clean


def test_scan_segments_are_disjoint_and_cover_the_table(dynamo_db):
    Note.objects.bulk_save(Note(note_id=f"n{i}", body="b") for i in range(20))
    slices = [[n.note_id for n in Note.objects.scan().segment(i, 4)] for i in range(4)]
    assert sorted(sum(slices, [])) == sorted(f"n{i}" for i in range(20))
    for bad in [(4, 4), (-1, 2), (0, 0), (0, 1_000_001), (True, 2)]:
        with pytest.raises(QueryError, match="segment"):
            Note.objects.scan().segment(*bad)
    with pytest.raises(QueryError, match="slices a scan"):
        Note.objects.filter(note_id="n1").segment(0, 2)


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_redraws_on_a_terminal_and_writes_plain_lines_elsewhere():
    now = [0.0]
    tty = Progress(Terminal(), "dump", total=1000, clock=lambda: now[0])
    now[0] = 2.0
    tty.add(200)
    assert tty.stream.getvalue() == "\r\x1b[Kdump: 200 of ~1,000 items, 100 items/s, ETA 0:00:08"
    tty.close()
    assert tty.stream.getvalue().endswith("\n")
    plain = Progress(io.StringIO(), "load", clock=lambda: now[0])
    plain.add(5)  # not yet due: one line every 10 s
    now[0] = 12.5
    plain.add(5)
    plain.close()
    assert plain.stream.getvalue().splitlines() == [
        "load: 10 items, 1 items/s",
        "load: 10 items, 1 items/s",
    ]
