"""The console reply topic: built by TableTopics, never by hand; the daemon replies
only there (issue 9 items 1, 2, 5), and every ``cmd/`` topic is a command (item 7)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from table_controller.mqtt.topics import (
    ParsedTopic,
    TableTopics,
    TopicError,
    TopicKind,
    is_secure,
    shown_name,
)


def test_reply_topic_is_under_the_table_and_public() -> None:
    topics = TableTopics("table-1")
    assert topics.reply("console-0123abcd") == "stud/v1/table-1/reply/console-0123abcd"
    assert not is_secure(topics.reply("console-0123abcd"))


@pytest.mark.parametrize("bad", ["", "a/b", "+", "#", "a b", "x" * 65])
def test_a_client_id_that_would_escape_the_reply_subtree_is_refused(bad: str) -> None:
    with pytest.raises(TopicError, match="client id"):
        TableTopics("table-1").reply(bad)


# ------------------------------------------------- issue 9: replies only under reply/

TOPICS = TableTopics("t1")


@pytest.mark.parametrize(
    ("topic", "why"),
    [
        ("", "empty"),  # item 2: the broker drops a client publishing to ""
        ("stud/v1/t1/reply/#", "one level"),  # item 1: paho raises on a wildcard
        ("stud/v1/t1/reply/+", "one level"),
        ("stud/v1/t1/reply/", "one level"),
        ("stud/v1/t1/reply/a/b", "one level"),
        ("stud/v1/t1/reply/" + "x" * 65, "one level"),
        ("stud/v1/t1/state", "may only go to"),  # item 5: the public state
        ("stud/v1/t1/secure/state", "may only go to"),
        ("stud/v1/t1/alerts", "may only go to"),
        ("stud/v1/t2/reply/console-1", "may only go to"),  # another table's tree
        ("$SYS/broker/uptime", "may only go to"),
        ("#", "may only go to"),
        ("x" * 70_000, "may only go to"),
    ],
)
def test_reply_topics_outside_the_reply_tree_are_refused_with_a_reason(
    topic: str, why: str
) -> None:
    problem = TOPICS.reply_problem(topic)
    assert problem is not None
    assert why in problem
    assert len(problem) < 400  # a 70,000-character topic is not echoed whole


def test_the_console_clients_reply_topic_is_accepted() -> None:
    assert TOPICS.reply_problem(TOPICS.reply("console-0123abcd")) is None


@given(st.text(max_size=120))
def test_any_accepted_reply_topic_is_one_safe_level_under_reply(topic: str) -> None:
    if TOPICS.reply_problem(topic) is None:
        level = topic.removeprefix("stud/v1/t1/reply/")
        assert topic == TOPICS.reply(level)  # check_level passes: no '/', '+', '#'


def test_every_topic_under_cmd_is_a_command_even_with_a_bad_name() -> None:
    # Item 7: several levels, empty or very long names are answered
    # unknown_command instead of being ignored.
    assert TOPICS.command_name("stud/v1/t1/cmd/a/b/c") == "a/b/c"
    assert TOPICS.command_name("stud/v1/t1/cmd/") == ""
    assert TOPICS.command_name("stud/v1/t1/cmd/" + "n" * 5000) == "n" * 5000
    assert TOPICS.command_name("stud/v1/t1/cmdx") is None
    assert TOPICS.command_name("stud/v1/t2/cmd/hand") is None


def test_shown_name_cuts_long_names() -> None:
    assert shown_name("hand") == "hand"
    cut = shown_name("n" * 5000)
    assert cut.startswith("n" * 64)
    assert cut.endswith("(5000 characters)")
    assert len(cut) < 100


# ------------------------------------------------- issue 21 item 11: no "$" before a newline


@pytest.mark.parametrize("tail", ["\n", "\r\n", "\n\n"])
def test_issue21_item11_a_trailing_newline_is_not_a_topic_level(tail: str) -> None:
    # `$` matches before a final "\n": ".../reply/abc\n" passed the daemon's own
    # check and only Mosquitto refused it. Every level check is a full match now.
    assert TOPICS.reply_problem(TOPICS.reply_prefix + "abc" + tail) is not None
    with pytest.raises(TopicError):
        TableTopics("t1" + tail)
    with pytest.raises(TopicError):
        TOPICS.reply("abc" + tail)


def test_parse_reads_back_every_topic_the_builder_makes() -> None:
    """Issue 20: one parser of topic names (TableTopics.parse) for every router."""
    topics = TableTopics("t-1")
    built = {
        topics.status: TopicKind.STATUS, topics.state: TopicKind.STATE,
        topics.events: TopicKind.EVENTS, topics.alerts: TopicKind.ALERTS,
        topics.alerts_open: TopicKind.ALERTS_OPEN,
        topics.alerts_changes: TopicKind.ALERTS_CHANGES, topics.dealer: TopicKind.DEALER,
        topics.hands: TopicKind.HANDS, topics.notices: TopicKind.NOTICES,
        topics.secure_state: TopicKind.SECURE_STATE,
        topics.secure_events: TopicKind.SECURE_EVENTS,
        topics.secure_hands: TopicKind.SECURE_HANDS,
        topics.secure_notices: TopicKind.SECURE_NOTICES,
    }
    for topic, kind in built.items():
        assert TableTopics.parse(topic) == ParsedTopic("t-1", kind), topic
        assert kind.secure == is_secure(topic)
    assert TableTopics.parse(topics.reader("3")) == ParsedTopic("t-1", TopicKind.READER, "3")
    assert TableTopics.parse(topics.reader_stats("3")) == ParsedTopic(
        "t-1", TopicKind.READER_STATS, "3")
    assert TableTopics.parse(topics.reply("pc-7")) == ParsedTopic("t-1", TopicKind.REPLY, "pc-7")
    assert TableTopics.parse(topics.cmd("ack")) == ParsedTopic("t-1", TopicKind.COMMAND, "ack")
    # Whatever follows cmd/ is a command's name (answered unknown_command if need be).
    assert TableTopics.parse("stud/v1/t-1/cmd/a/b") == ParsedTopic(
        "t-1", TopicKind.COMMAND, "a/b")
    assert topics.command_name("stud/v1/t-1/cmd/") == ""
    assert topics.command_name(TableTopics("t2").cmd("ack")) is None
    for other in ("stud/v2/t-1/state", "stud/v1/t-1", "stud/v1/t-1/", "stud/v1/t-1/nothing",
                  "stud/v1/t+1/state", "stud/v1/t-1/readers/3/other", "stud/v1/t-1/reply/a/b",
                  "stud/v1/t-1/readers/#", "$SYS/broker/uptime"):
        assert TableTopics.parse(other) is None, other
