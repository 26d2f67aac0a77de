"""The archive's topics (topics.ArchiveTopics): what it subscribes to, public or
secure, shared or not, and which topics it takes a message from."""

from __future__ import annotations

import pytest

from table_controller.mqtt.topics import ArchiveTopics, TopicError


def test_public_filters_never_include_secure() -> None:
    topics = ArchiveTopics("a1")
    assert topics.filters(secure=False) == [
        "stud/v1/+/hands", "stud/v1/+/alerts", "stud/v1/+/alerts/changes"]
    assert not [f for f in topics.filters(secure=False) if "secure" in f]
    assert topics.filters(secure=True)[0] == "stud/v1/+/secure/hands"
    assert topics.status == "stud/v1/_archive/a1/status"


def test_shared_and_listed_tables() -> None:
    topics = ArchiveTopics("a1", ("t1", "t2"), "archive")
    assert topics.filters(secure=False) == [
        f"$share/archive/stud/v1/{t}/{s}" for t in ("t1", "t2")
        for s in ("hands", "alerts", "alerts/changes")]


@pytest.mark.parametrize(("topic", "kind"), [
    ("stud/v1/t1/hands", ("t1", "hand")),
    ("stud/v1/t1/secure/hands", ("t1", "secure_hand")),
    ("stud/v1/t1/alerts", ("t1", "alert")),
    ("stud/v1/t1/alerts/changes", ("t1", "change")),
    ("stud/v1/t1/alerts/open", None),
    ("stud/v1/_archive/hands", None),
    ("stud/v1/t1/state", None),
    ("other/v1/t1/hands", None),
    ("stud/v1", None),
])
def test_kind_of_a_topic(topic: str, kind: tuple[str, str] | None) -> None:
    assert ArchiveTopics.kind(topic) == kind


@pytest.mark.parametrize("bad", [{"instance": "a/b"}, {"instance": "a1", "tables": ("#",)},
                                 {"instance": "a1", "share_group": "g+"}])
def test_bad_levels_refused(bad: dict[str, object]) -> None:
    with pytest.raises(TopicError):
        ArchiveTopics(**bad)  # type: ignore[arg-type]
