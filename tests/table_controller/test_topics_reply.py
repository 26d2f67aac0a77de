"""The console reply topic: built by TableTopics, never by hand."""

from __future__ import annotations

import pytest

from table_controller.topics import TableTopics, TopicError, is_secure


def test_reply_topic_is_under_the_table_and_public() -> None:
    topics = TableTopics("table-1")
    assert topics.reply("console-0123abcd") == "stud/v1/table-1/reply/console-0123abcd"
    assert not is_secure(topics.reply("console-0123abcd"))


@pytest.mark.parametrize("bad", ["", "a/b", "+", "#", "a b", "x" * 65])
def test_a_client_id_that_would_escape_the_reply_subtree_is_refused(bad: str) -> None:
    with pytest.raises(TopicError, match="client id"):
        TableTopics("table-1").reply(bad)
