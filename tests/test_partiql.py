"""PartiQL: tables resolved, parameters encoded by fields, no silent scan, errors mapped.

moto 5.1 runs only part of PartiQL: it answers a comparison other than ``=``
with a parameter, a DELETE with parameters and an INSERT with parameters with
a 500, and ignores conditions (no ConditionalCheckFailed, no cancelled
transaction). Those tests run on MiniStack (bin/test's last leg), which does
what DynamoDB does. Neither engine pages ExecuteStatement (both ignore
``Limit``), so the paging test splits a real answer in two.
"""

import json
from datetime import UTC, datetime

import pytest
from botocore.exceptions import ClientError

from dynamo_app import models, partiql
from dynamo_app.client.handle import get_handle
from dynamo_app.exceptions import (
    AlreadyExists,
    ConditionFailed,
    OutcomeUnknown,
    QueryError,
    Throttled,
    TransactionCanceled,
)
from dynamo_app.testing import ENGINE, count_requests
from tests.fault_support import Lost

not_on_moto = pytest.mark.skipif(
    ENGINE == "moto",
    reason="moto 5.1's PartiQL fails comparisons, parameterised INSERT/DELETE and conditions",
)


class PqPlayer(models.Model):
    team_id = models.StringField(partition_key=True)
    player_id = models.StringField(sort_key=True)
    player_name = models.StringField(null=True)
    uniform_number = models.IntegerField(null=True)
    joined = models.DateTimeField(epoch=True, null=True)

    class Meta:
        indexes = [models.GlobalIndex("by_name", partition_key="player_name")]


class PqTeam(models.Model):
    team_id = models.StringField(partition_key=True)
    title = models.StringField(null=True)


class PqBadge(models.Model):
    badge_id = models.StringField(partition_key=True)
    code = models.StringField()

    class Meta:
        unique = [models.Unique("code")]


class PqNote(models.Model):
    note_id = models.StringField(partition_key=True)
    text = models.StringField(null=True)
    version = models.VersionField()


JOINED = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)


def roster(team="t1", n=4):
    PqPlayer.objects.bulk_save(
        PqPlayer(
            team_id=team, player_id=f"p{i}", player_name=f"n{i}", uniform_number=i, joined=JOINED
        )
        for i in range(n)
    )


def sent(counter):
    return counter.calls[-1][1]


def test_select_by_partition_key_is_one_request_decoded_into_instances(dynamo_db):
    roster()
    roster("t2", 1)
    with count_requests() as requests:
        got = list(PqPlayer.objects.partiql("SELECT * FROM {table} WHERE team_id = ?", ["t1"]))
    assert sorted(p.player_id for p in got) == ["p0", "p1", "p2", "p3"]
    assert all(type(p) is PqPlayer and p.joined == JOINED for p in got)
    assert requests["ExecuteStatement"] == 1 and requests.total == 1
    params = sent(requests)
    # The deployed name (TABLE_PREFIX), quoted as an identifier; the value as a parameter.
    assert params["Statement"] == 'SELECT * FROM "test-pq_player" WHERE team_id = ?'
    assert params["Parameters"] == [{"S": "t1"}]
    assert "ConsistentRead" not in params
    got[0].player_name = "changed"
    got[0].save()  # a whole item: it may be saved back


def test_parameters_are_encoded_by_the_field_they_meet(dynamo_db):
    roster()
    epoch = PqPlayer._meta.fields_by_name["joined"].encode(JOINED)
    with count_requests() as requests:
        got = list(
            PqPlayer.objects.partiql(
                "SELECT player_id FROM {table} WHERE team_id = ? AND joined = ?",
                ["t1", JOINED],
                consistent=True,
            )
        )
    assert len(got) == 4 and all(p.player_name is None for p in got)
    assert sent(requests)["Parameters"] == [{"S": "t1"}, epoch]  # epoch seconds, as stored
    assert epoch == {"N": str(int(JOINED.timestamp()))}
    assert sent(requests)["ConsistentRead"] is True
    with pytest.raises(Exception, match="save"):
        got[0].save()  # a projection: a whole-item save would erase what was not read
    # Where no field can be told, the generic codec encodes the value.
    statement = partiql.prepare(
        "SELECT * FROM {table} WHERE team_id = ? AND extra.depth = ? AND ? IN [size(x)]",
        ["t1", JOINED.year, True],
        model=PqPlayer,
    )
    assert statement.parameters == [{"S": "t1"}, {"N": "2024"}, {"BOOL": True}]


def test_shapes_whose_attribute_is_told(dynamo_server):
    statement = partiql.prepare(
        "SELECT * FROM {table} WHERE ? = team_id AND joined BETWEEN ? AND ? "
        "AND uniform_number IN [?, ?] AND begins_with(player_name, ?)",
        ["t1", JOINED, JOINED, 1, 2, "A"],
        model=PqPlayer,
    )
    epoch = PqPlayer._meta.fields_by_name["joined"].encode(JOINED)
    assert statement.parameters == [{"S": "t1"}, epoch, epoch, {"N": "1"}, {"N": "2"}, {"S": "A"}]
    insert = partiql.prepare(
        "INSERT INTO {table} VALUE {'team_id': ?, 'player_id': ?, 'joined': ?, 'note': ?}",
        ["t1", "p9", JOINED, {"a": [1]}],
        model=PqPlayer,
    )
    assert insert.parameters == [{"S": "t1"}, {"S": "p9"}, epoch, {"M": {"a": {"L": [{"N": "1"}]}}}]
    update = partiql.prepare(
        'UPDATE {table} SET "joined" = ? WHERE team_id = ? AND player_id = ?',
        [JOINED, "t1", "p1"],
        model=PqPlayer,
    )
    assert update.parameters[0] == epoch and update.kind == "UPDATE"


def test_a_value_a_field_refuses_is_refused_before_sending(dynamo_db):
    with count_requests() as requests, pytest.raises(Exception, match="joined"):
        PqPlayer.objects.partiql(
            "SELECT * FROM {table} WHERE team_id = ? AND joined = ?",
            ["t1", datetime(2024, 5, 1)],  # naive: the field refuses it
        )
    assert requests.total == 0


@pytest.mark.parametrize(
    "statement, values",
    [
        ("SELECT * FROM {table}", []),
        ("SELECT * FROM {table} WHERE uniform_number = ?", [1]),
        ("SELECT * FROM {table} WHERE team_id > ?", ["t"]),
        ("SELECT * FROM {table} WHERE team_id = ? OR uniform_number = ?", ["t", 1]),
        ("SELECT * FROM {table} WHERE NOT team_id = ?", ["t"]),
        (
            "SELECT * FROM {table} WHERE (team_id = ? OR player_id = ?) AND uniform_number = ?",
            ["t", "p", 1],
        ),
        ("SELECT * FROM {table} WHERE begins_with(team_id, ?)", ["t"]),
        ('SELECT * FROM {table}."by_name" WHERE team_id = ?', ["t"]),
    ],
)
def test_a_select_without_partition_key_equality_is_refused_unless_scan(
    dynamo_db, statement, values
):
    with count_requests() as requests, pytest.raises(QueryError, match="scan=True"):
        PqPlayer.objects.partiql(statement, values)
    assert requests.total == 0


@pytest.mark.parametrize(
    "statement, values",
    [
        ("SELECT * FROM {table} WHERE team_id = ?", ["t"]),
        ('SELECT * FROM {table} WHERE "team_id" = ? AND uniform_number = ?', ["t", 1]),
        ("SELECT * FROM {table} WHERE (uniform_number = ? AND (team_id = ?))", [1, "t"]),
        ("SELECT * FROM {table} WHERE team_id IN [?, ?]", ["t", "u"]),
        ("SELECT * FROM {table} WHERE (team_id = ? OR x = ?) AND team_id = ?", ["t", 1, "t"]),
        ('SELECT * FROM {table}."by_name" WHERE player_name = ?', ["n"]),
    ],
)
def test_a_select_with_partition_key_equality_passes(dynamo_server, statement, values):
    partiql.prepare(statement, values, model=PqPlayer)


def test_scan_true_reads_the_whole_table(dynamo_db):
    roster()
    roster("t2", 2)
    got = list(PqPlayer.objects.partiql("SELECT * FROM {table}", scan=True))
    assert len(got) == 6


@pytest.mark.parametrize(
    "statement, values, message",
    [
        ('SELECT * FROM "test-pq_player" WHERE team_id = ?', ["t"], "names table"),
        ("SELECT * FROM pq_player WHERE team_id = ?", ["t"], "names table"),
        ('UPDATE "test-pq_player" SET a = ? WHERE team_id = ?', [1, "t"], "names table"),
        ("SELECT * FROM {table} WHERE team_id = 't1'", [], "parameters"),
        ("SELECT * FROM {table} WHERE team_id = ?", [], "1 parameter"),
        ("SELECT * FROM {table} WHERE team_id = ?", ["a", "b"], "2 value"),
        ("SELECT * FROM {table} WHERE team_id = {0}", [], "stray"),
        ("SELECT * FROM {table} WHERE team_id = ? AND x = {a b}", ["t"], "stray"),
        ("SELECT * FROM {table} WHERE team_id = {team}", [], "no table goes"),
        ("SELECT * FROM {NoSuchModel} WHERE team_id = ?", ["t"], "no registered model"),
        ("SELECT * FROM {table}, {PqTeam} WHERE team_id = ?", ["t"], "names one table"),
        ("SELECT * FROM x", [], "names table x"),
        ('SELECT * FROM {table}."nope" WHERE team_id = ?', ["t"], "nope"),
        ("DROP TABLE {table}", [], "must start with"),
        ("SELECT * FROM {table} WHERE team_id = ? ; x", ["t"], "unexpected"),
    ],
)
def test_statements_refused_before_sending(dynamo_db, statement, values, message):
    with count_requests() as requests, pytest.raises(QueryError, match=message):
        PqPlayer.objects.partiql(statement, values)
    assert requests.total == 0


def test_other_models_tables_by_name_label_or_app_label(dynamo_db):
    PqTeam.objects.create(team_id="t1", title="Tigers")
    for name in ("PqTeam", "tests.test_partiql.PqTeam"):
        got = list(partiql.execute(f"SELECT * FROM {{{name}}} WHERE team_id = ?", ["t1"]))
        assert [(type(t), t.title) for t in got] == [(PqTeam, "Tigers")]
    from project.roster.models import TeamEvent

    statement = partiql.prepare("SELECT * FROM {roster.TeamEvent} WHERE pk = ?", ["TEAM#t"])
    assert statement.model is TeamEvent
    with pytest.raises(QueryError, match="manager's model"):
        partiql.execute("SELECT * FROM {table} WHERE team_id = ?", ["t1"])


def test_an_ambiguous_class_name_asks_for_the_label(dynamo_server):
    from project.roster.models import Player as DemoPlayer  # noqa: F401  # and another
    from tests.test_unique import Player  # noqa: F401  # one Player

    with pytest.raises(QueryError, match="ambiguous"):
        partiql.prepare("SELECT * FROM {Player} WHERE team_id = ?", ["t"])
    statement = partiql.prepare("SELECT * FROM {tests.test_unique.Player} WHERE team_id = ?", ["t"])
    assert statement.text.startswith('SELECT * FROM "test-')


def test_update_through_partiql_changes_the_item(dynamo_db):
    roster(n=2)
    with count_requests() as requests:
        result = PqPlayer.objects.partiql(
            "UPDATE {table} SET player_name = ? WHERE team_id = ? AND player_id = ?",
            ["Ann", "t1", "p1"],
        )
    assert requests["ExecuteStatement"] == 1  # sent by the call, not by iterating
    assert list(result) == []
    assert PqPlayer.objects.get(team_id="t1", player_id="p1", consistent=True).player_name == "Ann"


def test_pages_are_fetched_lazily_with_next_token(dynamo_db):
    """Neither local engine pages ExecuteStatement: the first answer is cut after two
    items and given a NextToken, as DynamoDB does at 1 MB; the second request must
    carry it (the server ignores it and answers everything; the two items already
    returned are dropped)."""
    roster()
    answers = []

    def split(http_response, parsed, model, **kwargs):
        if model.name != "ExecuteStatement":
            return
        answers.append(parsed)
        if len(answers) == 1:
            parsed["Items"], parsed["NextToken"] = parsed["Items"][:2], "page-2"
        else:
            parsed["Items"] = parsed["Items"][2:]

    events = get_handle().client.meta.events
    events.register("after-call.dynamodb", split, unique_id="test-partiql-split")
    try:
        with count_requests() as requests:
            result = PqPlayer.objects.partiql(
                "SELECT * FROM {table} WHERE team_id = ?", ["t1"], consistent=True
            )
            items = iter(result)
            first = [next(items), next(items)]
            assert requests["ExecuteStatement"] == 1  # the second page only when needed
            rest = list(items)
    finally:
        events.unregister("after-call.dynamodb", unique_id="test-partiql-split")
    assert requests["ExecuteStatement"] == 2
    second = requests.calls[1][1]
    assert second["NextToken"] == "page-2" and second["ConsistentRead"] is True
    assert sorted(p.player_id for p in first + rest) == ["p0", "p1", "p2", "p3"]
    assert list(result) == []  # iterated once


@pytest.fixture
def throttled(settings):
    """``throttled(n)`` fails the next ``n`` PartiQL requests with throttling, as
    DynamoDB does under load (no local engine throttles); returns the parameters of
    every PartiQL request sent from then on, the failed ones too."""
    settings.DYNAMO = {**settings.DYNAMO, "RETRY": {"BASE_DELAY": "1ms", "MAX_DELAY": "2ms"}}
    events = get_handle().client.meta.events

    def install(times):
        sent = []

        def hook(model, params, **kwargs):
            if model.name.startswith("Execute"):
                sent.append(json.loads(params["body"]))
                if len(sent) <= times:
                    raise ClientError(
                        {"Error": {"Code": "ThrottlingException", "Message": "slow down"}},
                        model.name,
                    )

        events.unregister("before-call.dynamodb", unique_id="test-partiql-throttle")
        events.register("before-call.dynamodb", hook, unique_id="test-partiql-throttle")
        return sent

    yield install
    events.unregister("before-call.dynamodb", unique_id="test-partiql-throttle")


def test_throttled_statements_and_transactions_are_retried(dynamo_db, throttled):
    roster(n=2)
    PqTeam.objects.create(team_id="t9")  # a PartiQL UPDATE needs the item to exist
    sent = throttled(2)
    got = list(PqPlayer.objects.partiql("SELECT * FROM {table} WHERE team_id = ?", ["t1"]))
    assert len(got) == 2 and len(sent) == 3
    sent = throttled(2)
    partiql.execute_transaction(
        [
            (
                "UPDATE {PqPlayer} SET player_name = ? WHERE team_id = ? AND player_id = ?",
                ["X", "t1", "p0"],
            ),
            ("UPDATE {PqTeam} SET title = ? WHERE team_id = ?", ["T", "t9"]),
        ]
    )
    assert len(sent) == 3
    # One ClientRequestToken for the transaction, reused by its retries.
    tokens = {params["ClientRequestToken"] for params in sent}
    assert len(tokens) == 1 and len(tokens.pop()) == 32
    assert PqPlayer.objects.get(team_id="t1", player_id="p0", consistent=True).player_name == "X"
    throttled(5)
    with pytest.raises(Throttled) as error:
        list(PqPlayer.objects.partiql("SELECT * FROM {table} WHERE team_id = ?", ["t1"]))
    assert error.value.attempts == 5


def test_a_write_statement_whose_answer_was_lost_is_unknown_and_never_repeated(dynamo_db):
    """ExecuteStatement carries no token, and the text cannot tell a conditioned
    write from a plain one: a lost answer is OutcomeUnknown, the statement sent once."""
    roster(n=1)
    statement = "UPDATE {table} SET player_name = ? WHERE team_id = ? AND player_id = ?"
    with count_requests() as requests, Lost("ExecuteStatement") as lost:
        with pytest.raises(OutcomeUnknown) as error:
            PqPlayer.objects.partiql(statement, ["Ann", "t1", "p0"])
    assert lost.applied == 1 and requests["ExecuteStatement"] == 1
    assert "may or may not have been applied" in str(error.value)
    assert "execute_transaction() carries a ClientRequestToken" in str(error.value)
    assert PqPlayer.objects.get(team_id="t1", player_id="p0", consistent=True).player_name == "Ann"


def test_a_read_statement_whose_answer_was_lost_is_repeated(dynamo_db):
    roster(n=2)
    with count_requests() as requests, Lost("ExecuteStatement"):
        got = PqPlayer.objects.partiql("SELECT * FROM {table} WHERE team_id = ?", ["t1"])
    assert requests["ExecuteStatement"] == 2 and len(list(got)) == 2


def test_a_write_transaction_whose_answer_was_lost_is_repeated_with_its_token(dynamo_db):
    """The token makes the repeat safe where it is honoured (DynamoDB, MiniStack).
    moto ignores it and runs the repeat again, which these SET statements survive."""
    roster(n=2)
    update = "UPDATE {PqPlayer} SET player_name = ? WHERE team_id = ? AND player_id = ?"
    with count_requests() as requests, Lost("ExecuteTransaction") as lost:
        partiql.execute_transaction([(update, ["X", "t1", "p0"]), (update, ["Y", "t1", "p1"])])
    assert lost.applied == 1 and requests["ExecuteTransaction"] == 2
    names = [p.player_name for p in PqPlayer.objects.filter(team_id="t1")]
    assert sorted(names) == ["X", "Y"]


@not_on_moto
def test_an_insert_transaction_whose_answer_was_lost_inserts_once(dynamo_db):
    insert = "INSERT INTO {PqPlayer} VALUE {'team_id': ?, 'player_id': ?}"
    with Lost("ExecuteTransaction"):
        partiql.execute_transaction([(insert, ["t1", "p8"])])  # not TransactionCanceled
    assert [p.player_id for p in PqPlayer.objects.filter(team_id="t1")] == ["p8"]


@not_on_moto
def test_comparison_with_a_parameter_selects_the_matching_items(dynamo_db):
    roster()
    got = PqPlayer.objects.partiql(
        "SELECT * FROM {table} WHERE team_id = ? AND uniform_number > ?", ["t1", 1]
    )
    assert sorted(p.uniform_number for p in got) == [2, 3]


@not_on_moto
def test_a_failed_condition_is_condition_failed_and_a_duplicate_insert_already_exists(dynamo_db):
    roster(n=1)
    with pytest.raises(ConditionFailed):
        PqPlayer.objects.partiql(
            "UPDATE {table} SET player_name = ? WHERE team_id = ? AND player_id = ? "
            "AND uniform_number = ?",
            ["B", "t1", "p0", 99],
        )
    insert = "INSERT INTO {table} VALUE {'team_id': ?, 'player_id': ?, 'joined': ?}"
    PqPlayer.objects.partiql(insert, ["t1", "p7", JOINED])
    assert PqPlayer.objects.get(team_id="t1", player_id="p7", consistent=True).joined == JOINED
    with pytest.raises(AlreadyExists, match="INSERT"):
        PqPlayer.objects.partiql(insert, ["t1", "p7", JOINED])


@not_on_moto
def test_a_cancelled_transaction_changes_nothing_and_says_why(dynamo_db):
    roster(n=2)
    with pytest.raises(TransactionCanceled) as error:
        partiql.execute_transaction(
            [
                (
                    "UPDATE {PqPlayer} SET player_name = ? WHERE team_id = ? AND player_id = ?",
                    ["X", "t1", "p0"],
                ),
                (
                    "UPDATE {PqPlayer} SET player_name = ? WHERE team_id = ? AND player_id = ? "
                    "AND uniform_number = ?",
                    ["Y", "t1", "p1", 99],
                ),
            ]
        )
    codes = [r.get("Code") for r in error.value.reasons]
    assert codes[0] == "None" and codes[1].startswith("ConditionalCheckFailed")
    assert PqPlayer.objects.get(team_id="t1", player_id="p0", consistent=True).player_name == "n0"


@not_on_moto
def test_a_read_transaction_returns_one_entry_per_statement(dynamo_db):
    roster(n=1)
    PqTeam.objects.create(team_id="t1", title="Tigers")
    player, missing, team = partiql.execute_transaction(
        [
            ("SELECT * FROM {PqPlayer} WHERE team_id = ? AND player_id = ?", ["t1", "p0"]),
            ("SELECT * FROM {PqPlayer} WHERE team_id = ? AND player_id = ?", ["t1", "zz"]),
            ("SELECT * FROM {PqTeam} WHERE team_id = ?", ["t1"]),
        ]
    )
    assert (player.player_id, missing, team.title) == ("p0", None, "Tigers")


@pytest.mark.parametrize("model, key", [(PqBadge, "badge_id"), (PqNote, "note_id")])
def test_writes_that_would_bypass_locks_or_versions_are_refused(dynamo_db, model, key):
    statements = [
        f"INSERT INTO {{table}} VALUE {{'{key}': ?}}",
        f"UPDATE {{table}} SET x = ? WHERE {key} = ?",
        f"DELETE FROM {{table}} WHERE {key} = ?",
    ]
    with count_requests() as requests:
        for statement in statements:
            values = [1, "k"] if statement.startswith("UPDATE") else ["k"]
            with pytest.raises(QueryError, match="bypass"):
                model.objects.partiql(statement, values)
        with pytest.raises(QueryError, match="bypass"):
            partiql.execute_transaction(
                [(statements[2].replace("{table}", f"{{{model.__name__}}}"), ["k"])]
            )
    assert requests.total == 0
    assert list(model.objects.partiql(f"SELECT * FROM {{table}} WHERE {key} = ?", ["k"])) == []


class PqLeague(models.Table):
    class Meta:
        table_name = "pq_league"


class PqClub(models.Model):
    club_id = models.StringField()
    title = models.StringField(null=True)

    class Meta:
        table = PqLeague
        keys = {"pk": "CLUB#{club_id}", "sk": "CLUB"}


class PqMember(models.Model):
    club_id = models.StringField()
    member_id = models.StringField()
    number = models.IntegerField()

    class Meta:
        table = PqLeague
        keys = {"pk": "CLUB#{club_id}", "sk": "MEMBER#{member_id}"}
        unique = [models.Unique("number", within="club_id")]


@pytest.mark.parametrize(
    "statement, parameters, said",
    [
        (
            "UPDATE {PqClub} SET title = ? WHERE pk = ? AND sk = ?",
            ["x", "CLUB#c1", "MEMBER#m1"],
            "sk = \\? with a key its template 'CLUB' renders \\('MEMBER#m1'\\)",
        ),
        (
            'UPDATE {PqClub} SET "number" = ? WHERE pk = ? AND sk = ?',
            [7, "CLUB#c1", "MEMBER#m1"],
            "may touch only its own items",
        ),
        ("DELETE FROM {PqClub} WHERE pk = ? AND sk = ?", ["CLUB#c1", "MEMBER#m1"], "'CLUB'"),
        ("DELETE FROM {PqClub} WHERE pk = ?", ["CLUB#c1"], "sk = \\?.*no parameter"),
        ("DELETE FROM {PqClub} WHERE pk = ? AND sk = ?", ["TEAM#c1", "CLUB"], "'CLUB#{club_id}'"),
        (
            "INSERT INTO {PqClub} VALUE {'pk': ?, 'sk': ?, 'club_id': ?}",
            ["CLUB#c2", "CLUB", "c2"],
            "'_type': \\? with the value 'PqClub'",
        ),
        (
            "INSERT INTO {PqClub} VALUE {'pk': ?, 'sk': ?, '_type': ?}",
            ["CLUB#c2", "CLUB", "PqMember"],
            "'_type'",
        ),
    ],
)
def test_a_write_through_a_shared_table_model_touches_its_own_items_only(
    dynamo_db, statement, parameters, said
):
    PqMember.objects.create(club_id="c1", member_id="m1", number=5)
    with pytest.raises(QueryError, match=f"(?s){said}"):
        partiql.execute(statement, parameters)
    stored = PqMember.objects.get(club_id="c1", member_id="m1", consistent=True)
    assert stored.number == 5 and stored.extra_attributes == {}


def test_a_write_through_a_shared_table_model_on_its_own_item_is_sent(dynamo_db):
    PqClub.objects.create(club_id="c1", title="Old")
    partiql.execute(
        "UPDATE {PqClub} SET title = ? WHERE pk = ? AND sk = ?", ["New", "CLUB#c1", "CLUB"]
    )
    assert PqClub.objects.get(club_id="c1", consistent=True).title == "New"
    partiql.prepare(
        "INSERT INTO {PqClub} VALUE {'pk': ?, 'sk': ?, '_type': ?, 'club_id': ?}",
        ["CLUB#c2", "CLUB", "PqClub", "c2"],
    )
