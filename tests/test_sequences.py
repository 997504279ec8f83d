"""SequenceField: numbers from a counter item, a block per request, never twice.

The concurrency tests run real processes against the suite's server: each
reserves blocks with its own requests, as a project's web workers would.
"""

import io
import json
import os

import pytest
from django.core.management import CommandError, call_command

from dynamo_app import app_tables, models, sequences
from dynamo_app.data import dumpload
from dynamo_app.exceptions import AlreadyExists, ModelDefinitionError, SequenceError
from dynamo_app.sequences import Sequence
from dynamo_app.tables import registry
from dynamo_app.testing import count_requests
from tests.process_support import run_together
from tests.thread_support import in_threads


class Ticket(models.Model):
    """The sequence as the partition key: /tickets/1234/."""

    ticket_id = models.SequenceField(partition_key=True)
    title = models.StringField()

    class Meta:
        table_name = "seq_ticket"


class Post(models.Model):
    """A UUID key, and a display number from a cached sequence beside it."""

    post_id = models.StringField(partition_key=True, default=models.new_uuid)
    number = models.SequenceField(cache=10)

    class Meta:
        table_name = "seq_post"


def test_a_model_with_a_sequence_field_declares_the_sequences_table():
    assert app_tables.needed(Ticket._meta)[-1] is app_tables.SEQUENCES
    assert app_tables.SEQUENCES.declared_name in registry
    assert Ticket._meta.fields_by_name["ticket_id"].sequence.name == "seq_ticket.ticket_id"


def test_create_fills_the_key_with_one_update_and_one_put(dynamo_db):
    with count_requests() as counter:
        first = Ticket.objects.create(title="Printer on fire")
    assert dict(counter) == {"UpdateItem": 1, "PutItem": 1}
    second = Ticket(title="Still on fire")
    assert second.ticket_id is None  # nothing reserved for an unsaved instance
    second.save()
    assert (first.ticket_id, second.ticket_id) == (1, 2)
    assert Ticket.objects.get(ticket_id=2).title == "Still on fire"


def test_a_value_given_is_kept_and_takes_no_number(dynamo_db):
    with count_requests() as counter:
        Ticket.objects.create(ticket_id=500, title="Imported")
    assert dict(counter) == {"PutItem": 1}
    assert Ticket.objects.create(title="New").ticket_id == 1
    with pytest.raises(AlreadyExists):
        Ticket.objects.create(ticket_id=1, title="Taken")


def test_a_saved_item_keeps_its_number(dynamo_db):
    post = Post.objects.create()
    post.save()
    Post.objects.bulk_save([post, Post(), Post()])
    numbers = sorted(p.number for p in Post.objects.scan())
    assert numbers == [1, 2, 3]


def test_one_update_per_block_of_cache_numbers(dynamo_db):
    sequence = Sequence("blocks", cache=100)
    with count_requests() as counter:
        taken = [sequence.next() for _ in range(250)]
    assert dict(counter) == {"UpdateItem": 3}
    assert taken == list(range(1, 251))
    assert sequence.current() == 300  # the third block is this process's


def test_cache_1_is_a_request_per_number(dynamo_db):
    sequence = Sequence("strict")
    with count_requests() as counter:
        taken = [sequence.next() for _ in range(5)]
    assert dict(counter) == {"UpdateItem": 5}
    assert taken == [1, 2, 3, 4, 5] and sequence.current() == 5


def test_threads_never_share_a_number_nor_waste_a_block(dynamo_db):
    sequence = Sequence("threads", cache=7)
    taken: list[list[int]] = [[] for _ in range(8)]

    def take(mine: list[int]) -> None:
        mine.extend(sequence.next() for _ in range(200))

    assert in_threads(take, taken) == []
    every = [n for mine in taken for n in mine]
    assert sorted(every) == list(range(1, 1601))
    assert all(mine == sorted(mine) for mine in taken)
    assert sequence.current() == 7 * 229  # 1,600 numbers: 229 blocks, one reservation each


def test_emptying_the_store_forgets_the_blocks(dynamo_db, dynamo_server):
    assert Post.objects.create().number == 1
    dynamo_server.empty()
    assert Post.objects.create().number == 1  # not 2, from a block of the emptied table


def test_a_forked_child_forgets_the_blocks_of_its_parent(dynamo_db):
    sequence = Sequence("forked", cache=100)
    assert sequence.next() == 1
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no request, only what it still holds
        os.write(write, json.dumps(len(sequences._blocks)).encode())
        os._exit(0)
    os.close(write)
    held_by_child = json.loads(os.read(read, 100))
    os.waitpid(pid, 0)
    assert held_by_child == 0
    assert sequence.next() == 2


def test_bad_declarations_are_refused():
    for cache in (0, -1, 1.5, True, "10"):
        with pytest.raises(SequenceError, match="cache="):
            models.SequenceField(cache=cache)
    for option in ("default", "null", "choices"):
        with pytest.raises(ModelDefinitionError, match=option):
            models.SequenceField(**{option: None})
    with pytest.raises(SequenceError, match="name"):
        Sequence("")


def test_advance_moves_forward_only(dynamo_db):
    sequence = Sequence("loaded")
    sequence.advance(1000)
    assert sequence.next() == 1001
    sequence.advance(1001)  # where it is: nothing to do
    with pytest.raises(SequenceError, match="is at 1001, past 5"):
        sequence.advance(5)
    assert sequence.current() == 1001


def test_the_command_shows_and_advances_a_sequence(dynamo_db, capsys):
    Ticket.objects.create(title="One")
    call_command("dynamo_sequence")
    shown = capsys.readouterr().out
    assert "seq_ticket.ticket_id: 1 reserved; used by Ticket.ticket_id (cache=1)" in shown
    assert "seq_post.number: 0 reserved; used by Post.number (cache=10)" in shown
    call_command("dynamo_sequence", "seq_ticket.ticket_id", "--to", "7000")
    assert "new numbers start above 7000" in capsys.readouterr().out
    assert Ticket.objects.create(title="After the load").ticket_id == 7001
    with pytest.raises(CommandError, match="is at 7001, past 10"):
        call_command("dynamo_sequence", "seq_ticket.ticket_id", "--to", "10")
    with pytest.raises(CommandError, match="Sequences: .*seq_ticket.ticket_id"):
        call_command("dynamo_sequence", "seq_tickets.id", "--to", "10")



def test_a_load_moves_each_sequence_up_to_the_highest_number_loaded(dynamo_db):
    """As loaddata resets SQL sequences: a create after a load never takes a loaded number."""
    Ticket.objects.create(title="Before")  # the sequence is at 1
    lines = [
        json.dumps({"model": Ticket._meta.label, "fields": {"ticket_id": n, "title": f"#{n}"}})
        for n in (40, 7, 41)
    ]
    lines.append(json.dumps({"model": Post._meta.label, "fields": {"post_id": "p", "number": 3}}))
    with count_requests() as counter:
        result = dumpload.load(lines)
    assert result.advanced == {"seq_ticket.ticket_id": 41, "seq_post.number": 3}
    assert counter["UpdateItem"] == 2  # one conditional update per sequence, before the writes
    assert Ticket.objects.create(title="After").ticket_id == 42
    assert Post.objects.create().number == 4

    again = dumpload.load(lines[:1])  # the sequence is past 40 already: left where it is
    assert (again.loaded, again.advanced) == (1, {})
    assert Sequence("seq_ticket.ticket_id").current() == 42


def test_the_load_command_says_which_sequences_it_moved(dynamo_db, tmp_path):
    path = tmp_path / "tickets.jsonl"
    line = {"model": Ticket._meta.label, "fields": {"ticket_id": 1234, "title": "Imported"}}
    path.write_text(json.dumps(line) + "\n")
    said = io.StringIO()
    call_command("dynamo_load", str(path), stderr=said)
    assert "sequence seq_ticket.ticket_id moved up to 1,234 (the highest loaded)" in said.getvalue()


def test_a_load_drops_the_block_this_process_holds_below_the_loaded_numbers(dynamo_db):
    """The loading process's own block (cache=10: 1 to 10, 1 taken) holds numbers a
    line may carry: a create after the load starts above them, not at 2."""
    assert Post.objects.create().number == 1
    line = {"model": Post._meta.label, "fields": {"post_id": "loaded", "number": 10}}
    assert dumpload.load([json.dumps(line)]).advanced == {"seq_post.number": 10}
    assert Post.objects.create().number == 11

    # The sequence is past 15 (20 reserved), but this process's block (12 to 20) is not.
    line["fields"] = {"post_id": "loaded-too", "number": 15}
    assert dumpload.load([json.dumps(line)]).advanced == {}
    assert Post.objects.create().number == 21


def test_load_fixture_says_which_sequences_its_files_moved(dynamo_db, tmp_path):
    paths = []
    for name, numbers in (("first", (5, 9)), ("second", (12,))):
        paths.append(tmp_path / f"{name}.jsonl")
        paths[-1].write_text(
            "".join(
                json.dumps({"model": Ticket._meta.label, "fields": {"ticket_id": n, "title": "t"}})
                + "\n"
                for n in numbers
            )
        )
    result = dumpload.load_fixture(*paths)
    assert (result.loaded, result.advanced) == (3, {"seq_ticket.ticket_id": 12})


# --- processes -----------------------------------------------------------------------

TAKE = """
from dynamo_app.sequences import Sequence

sequence = Sequence(sys.argv[1], cache=int(sys.argv[2]))
start_together()
print(json.dumps([sequence.next() for _ in range(int(sys.argv[3]))]))
"""

PROCESSES = 6
EACH = 300  # two blocks each at the larger cache: every process takes a second one


@pytest.mark.processes  # processes of their own: one leg runs them (bin/test)
@pytest.mark.parametrize("cache", [1, EACH // 2])
def test_processes_never_take_the_same_number(dynamo_db, tmp_path, cache):
    outputs = run_together(
        TAKE, "shared", str(cache), str(EACH), processes=PROCESSES, go=tmp_path / "go"
    )
    taken = [json.loads(out) for out in outputs]
    every = [n for mine in taken for n in mine]
    assert len(every) == len(set(every)) == PROCESSES * EACH  # no duplicate
    assert sorted(every) == list(range(1, PROCESSES * EACH + 1))  # and no gap: blocks all used
    assert all(mine == sorted(mine) and len(set(mine)) == EACH for mine in taken)
    # One reservation per block: cache=150 took 12 requests where cache=1 took 1,800.
    assert Sequence("shared").current() == PROCESSES * EACH


def test_an_unsaved_instance_validates_without_its_number():
    Ticket(title="New").full_clean()  # blank=True: the number comes with the first save
    assert not Ticket._meta.fields_by_name["ticket_id"].editable
