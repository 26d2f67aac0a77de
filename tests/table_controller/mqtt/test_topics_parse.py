"""Issue 20: topic names are parsed in one place, :meth:`TableTopics.parse`.

Properties: no topic string crashes the parser (a broker delivers whatever a
client published, 65,535 bytes of anything), every topic the builder makes is
read back as what it is, and the routers built on the parser (the broadcast
service's, the demo view's, the archive's) take exactly the topics they took
when each had its own string handling.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from table_controller.broadcast.service import route
from table_controller.demo.view import TableView
from table_controller.mqtt.topics import (
    ARCHIVE_LEVEL,
    ArchiveTopics,
    ParsedTopic,
    TableTopics,
    TopicKind,
    check_level,
)

LEVEL = st.from_regex(r"[A-Za-z0-9_.-]{1,64}", fullmatch=True)
"""One safe topic level (:func:`check_level`)."""

# Topic-like text: mostly levels of our own vocabulary, so that the parser's
# deeper branches are reached, mixed with arbitrary text and wildcards.
_WORDS = st.sampled_from(["stud", "v1", "v2", "t1", "secure", "state", "events", "alerts",
                          "open", "changes", "readers", "stats", "reply", "cmd", "hands",
                          "notices", "claim", "status", "dealer", "", "+", "#", "$SYS"])
TOPIC_LIKE = st.one_of(
    st.text(),
    st.lists(st.one_of(_WORDS, LEVEL, st.text(max_size=5)), max_size=7).map("/".join),
)

# Every kind and how the builder makes its topic for a table (and a name).
BUILDERS: dict[TopicKind, Callable[[TableTopics, str], str]] = {
    TopicKind.STATUS: lambda t, _: t.status,
    TopicKind.CLAIM: lambda t, _: t.claim,
    TopicKind.STATE: lambda t, _: t.state,
    TopicKind.EVENTS: lambda t, _: t.events,
    TopicKind.ALERTS: lambda t, _: t.alerts,
    TopicKind.ALERTS_OPEN: lambda t, _: t.alerts_open,
    TopicKind.ALERTS_CHANGES: lambda t, _: t.alerts_changes,
    TopicKind.DEALER: lambda t, _: t.dealer,
    TopicKind.HANDS: lambda t, _: t.hands,
    TopicKind.NOTICES: lambda t, _: t.notices,
    TopicKind.SECURE_STATE: lambda t, _: t.secure_state,
    TopicKind.SECURE_EVENTS: lambda t, _: t.secure_events,
    TopicKind.SECURE_HANDS: lambda t, _: t.secure_hands,
    TopicKind.SECURE_NOTICES: lambda t, _: t.secure_notices,
    TopicKind.READER: lambda t, n: t.reader(n),
    TopicKind.READER_STATS: lambda t, n: t.reader_stats(n),
    TopicKind.REPLY: lambda t, n: t.reply(n),
    TopicKind.COMMAND: lambda t, n: t.cmd(n),
}
NAMED = {TopicKind.READER, TopicKind.READER_STATS, TopicKind.REPLY, TopicKind.COMMAND}


def test_every_kind_has_a_builder() -> None:
    """A new kind must be added here too, so the round trip covers it."""
    assert set(BUILDERS) == set(TopicKind)


@given(TOPIC_LIKE)
def test_no_topic_crashes_the_parser_or_a_router(topic: str) -> None:
    parsed = TableTopics.parse(topic)
    if parsed is not None:
        check_level(parsed.table, "table id")
        assert topic.startswith(f"{TableTopics(parsed.table).base}/")
        assert (parsed.name is not None) == (parsed.kind in NAMED)
    route(topic)
    ArchiveTopics.kind(topic)
    TableView("t1").update(topic, {})


@given(LEVEL, LEVEL, st.sampled_from(list(TopicKind)))
def test_every_built_topic_reads_back(table: str, name: str, kind: TopicKind) -> None:
    topic = BUILDERS[kind](TableTopics(table), name)
    expected = ParsedTopic(table, kind, name if kind in NAMED else None)
    assert TableTopics.parse(topic) == expected
    # The topic of another table, or of no table of ours, is not this table's.
    assert TableTopics.parse("x" + topic) is None
    assert TableTopics.parse(topic.replace("stud/v1/", "stud/v2/", 1)) is None


def _old_broadcast_route(topic: str) -> tuple[str, str, str] | None:
    """The broadcast service's own router before issue 20, for comparison."""
    parts = topic.split("/")
    if parts[:2] != ["stud", "v1"] or len(parts) < 4:
        return None
    table, rest = parts[2], "/".join(parts[3:])
    if rest.startswith("readers/") and rest.count("/") == 1:
        return table, "secure", "reader"
    hit = {"secure/state": ("secure", "state"), "secure/events": ("secure", "event"),
           "secure/notices": ("secure", "notice"), "alerts": ("secure", "alert"),
           "status": ("secure", "status"), "state": ("public", "state"),
           "events": ("public", "event")}.get(rest)
    return (table, *hit) if hit else None


@given(LEVEL, LEVEL, st.sampled_from(list(TopicKind)))
def test_broadcast_routes_every_topic_of_a_table_as_before(
        table: str, name: str, kind: TopicKind) -> None:
    """For every topic a daemon publishes the new router agrees with the old one."""
    topic = BUILDERS[kind](TableTopics(table), name)
    assert route(topic) == _old_broadcast_route(topic)


@given(TOPIC_LIKE)
def test_broadcast_router_takes_no_more_than_before(topic: str) -> None:
    """On any text the new router takes a subset of what the old one took: it now
    also refuses a table or reader id that is no safe topic level."""
    new = route(topic)
    if new is not None:
        assert new == _old_broadcast_route(topic)


def test_broadcast_router_examples() -> None:
    topics = TableTopics("t1")
    assert route(topics.secure_state) == ("t1", "secure", "state")
    assert route(topics.secure_notices) == ("t1", "secure", "notice")
    assert route(topics.reader("r1")) == ("t1", "secure", "reader")
    assert route(topics.events) == ("t1", "public", "event")
    for ignored in (topics.reader_stats("r1"), topics.hands, topics.secure_hands,
                    topics.claim, topics.alerts_open, "stud/v1/t1/readers/a b"):
        assert route(ignored) is None, ignored


def test_archive_kind_follows_the_parser() -> None:
    topics = TableTopics("t1")
    assert ArchiveTopics.kind(topics.secure_hands) == ("t1", "secure_hand")
    assert ArchiveTopics.kind(topics.alerts_changes) == ("t1", "change")
    assert ArchiveTopics.kind(TableTopics(ARCHIVE_LEVEL).hands) is None
    assert ArchiveTopics.kind(topics.secure_state) is None


def test_demo_view_takes_only_its_own_tables_public_topics() -> None:
    view = TableView("t1")
    mine, other = TableTopics("t1"), TableTopics("t2")
    assert view.update(mine.reader("r1"), {"state": "online"}) == []
    assert view.update(mine.reader("r1"), {"state": "lost"}) == ["reader r1: lost"]
    assert view.update(other.reader("r1"), {"state": "online"}) == []
    assert view.readers == {"r1": "lost"}
    alert = {"code": "missing_burn", "message": "m"}
    assert view.update(other.alerts, alert) == []
    assert view.update(mine.alerts, alert) == ["ALERT missing_burn: m"]
    assert view.update(mine.reader_stats("r1"), {"state": "x"}) == []
    assert view.alerts_seen == 1
