"""The console guard alone (daemon/console_guard.py): no broker, no thread, no clock."""

from __future__ import annotations

from table_controller.daemon.console_guard import ConsoleGuard, RejectedSummary
from table_controller.domain.engine.outputs import ConsoleResult
from table_controller.mqtt.publisher import CommandRequest
from table_controller.mqtt.topics import TableTopics

TOPICS = TableTopics("t1")


def request(name: str = "act", payload: bytes = b"{}", topic: str | None = None,
            correlation: bytes | None = b"c1") -> CommandRequest:
    return CommandRequest(name, payload, topic if topic is not None else TOPICS.reply("pc"),
                          correlation)


def test_only_the_tables_own_reply_tree_may_be_answered() -> None:
    guard = ConsoleGuard(TOPICS)
    assert guard.reply_problem(request()) is None
    assert guard.reply_problem(CommandRequest("act", b"{}", None, None)) is None  # unanswered
    for bad in ("", "stud/v1/t1/state", "stud/v1/t1/reply/#", "stud/v1/t2/reply/pc"):
        assert guard.reply_problem(request(topic=bad)) is not None, bad


def test_a_request_answered_before_is_recalled_not_applied_again() -> None:
    guard = ConsoleGuard(TOPICS)
    key = guard.key(request())
    assert guard.recall(key) is None
    result = ConsoleResult(True, message="ok")
    guard.remember(key, result, b"reply")
    recalled = guard.recall(guard.key(request()))
    assert recalled is not None
    assert recalled.result == result
    assert recalled.payload == b"reply"
    assert guard.repeats == 1
    # The same correlation data with another command or payload is another request.
    assert guard.recall(guard.key(request(name="kill"))) is None
    assert guard.recall(guard.key(request(payload=b'{"seat": 1}'))) is None
    # Without correlation data nothing is remembered.
    assert guard.key(request(correlation=None)) is None
    guard.remember(None, result, b"reply")
    assert guard.recall(None) is None


def test_the_memory_is_bounded_oldest_first() -> None:
    guard = ConsoleGuard(TOPICS, memory=2)
    keys = [guard.key(request(correlation=bytes([n]))) for n in range(3)]
    for key in keys:
        guard.remember(key, ConsoleResult(True), b"r")
    assert guard.recall(keys[0]) is None
    assert guard.recall(keys[1]) is not None
    assert guard.recall(keys[2]) is not None


def test_rejections_are_alerted_up_to_the_burst_then_summed_up() -> None:
    guard = ConsoleGuard(TOPICS, burst=2, window=10.0)
    assert [guard.rejected(f"bad {n}", 1.0 + n) for n in range(5)] == [
        True, True, False, False, False]
    assert guard.next_deadline() == 11.0
    assert guard.close_window(10.9) is None
    assert guard.close_window(11.0) == RejectedSummary(3, "bad 4")
    assert guard.next_deadline() is None
    assert guard.rejected("again", 12.0)  # a new window
    assert guard.close_window(22.0) is None  # nothing was only counted
