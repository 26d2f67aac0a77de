"""Topic names and the log redaction processor."""

from __future__ import annotations

import io
import json

import pytest
import structlog

from table_controller.daemon.logging import REDACTED, configure_logging, redact_secrets
from table_controller.mqtt.topics import TableTopics, TopicError, is_secure


def test_topic_names() -> None:
    topics = TableTopics("table-1")
    assert topics.status == "stud/v1/table-1/status"
    assert topics.state == "stud/v1/table-1/state"
    assert topics.events == "stud/v1/table-1/events"
    assert topics.secure_state == "stud/v1/table-1/secure/state"
    assert topics.secure_events == "stud/v1/table-1/secure/events"
    assert topics.alerts == "stud/v1/table-1/alerts"
    assert topics.reader("3") == "stud/v1/table-1/readers/3"
    assert topics.cmd_rebirth == "stud/v1/table-1/cmd/rebirth"
    assert topics.cmd_filter == "stud/v1/table-1/cmd/#"
    assert topics.command_name("stud/v1/table-1/cmd/rebirth") == "rebirth"
    assert topics.command_name("stud/v1/table-2/cmd/rebirth") is None


@pytest.mark.parametrize("bad", ["", "a/b", "+", "#", "a b", "x" * 65])
def test_ids_that_would_escape_their_subtree_are_refused(bad: str) -> None:
    with pytest.raises(TopicError):
        TableTopics(bad)
    with pytest.raises(TopicError):
        TableTopics("t1").reader(bad)


def test_is_secure() -> None:
    topics = TableTopics("t1")
    secure = {topics.secure_state, topics.secure_events}
    for topic in (topics.status, topics.state, topics.events, topics.alerts,
                  topics.reader("1"), topics.cmd_rebirth, *secure):
        assert is_secure(topic) == (topic in secure)
    assert not is_secure("other/v1/t1/secure/state")
    assert is_secure("stud/v1/t2/secure/anything/below")


def test_redaction_at_info_and_above_only() -> None:
    event = {"event": "x", "uid": "E004", "nested": {"down_cards": ["As"], "seat": 1},
             "items": [{"deck_map": {"E004": "As"}}], "seat": 4}
    for level in ("info", "warning", "error"):
        out = redact_secrets(None, level, dict(event))
        assert out["uid"] == REDACTED
        assert out["nested"] == {"down_cards": REDACTED, "seat": 1}
        assert out["items"] == [{"deck_map": REDACTED}]
        assert out["seat"] == 4
    assert redact_secrets(None, "debug", dict(event)) == event


def test_json_logging_redacts_end_to_end() -> None:
    stream = io.StringIO()
    try:
        configure_logging("json", "info", stream=stream)
        log = structlog.get_logger("test")
        log.debug("hidden", uid="E004")
        log.info("tag_seen", uid="E0040150A1B2C3D4", zone="seat1.up")
    finally:
        structlog.reset_defaults()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 1
    assert lines[0]["event"] == "tag_seen"
    assert lines[0]["uid"] == REDACTED
    assert lines[0]["level"] == "info"
    assert "E0040150A1B2C3D4" not in stream.getvalue()


def test_console_logging_redacts() -> None:
    stream = io.StringIO()
    try:
        configure_logging("console", "debug", stream=stream)
        structlog.get_logger("test").warning("deck", deck_map={"E004": "As"})
    finally:
        structlog.reset_defaults()
    assert "E004" not in stream.getvalue()
    assert "deck" in stream.getvalue()
