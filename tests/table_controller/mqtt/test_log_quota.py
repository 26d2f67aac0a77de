"""The log quota alone (mqtt/log_quota.py): N lines per event per window, then a summary."""

from __future__ import annotations

import structlog
from structlog.testing import capture_logs

from table_controller.mqtt.log_quota import SUMMARY_EVENT, LogQuota, Suppressed, log_limited


def test_the_first_lines_of_a_window_pass_the_rest_are_counted() -> None:
    quota = LogQuota(burst=3, window=10.0)
    assert [quota.admit("console_reply_not_sent", 0.5) for _ in range(5)] == [
        True, True, True, False, False]
    assert quota.admit("other_event", 1.0)  # each event has its own quota
    assert quota.ended(9.9) == []
    assert quota.ended(10.5) == [Suppressed("console_reply_not_sent", 2)]
    assert quota.ended(30.0) == []  # handed out once
    assert quota.suppressed_total == 2


def test_a_new_window_starts_afresh() -> None:
    quota = LogQuota(burst=1, window=10.0)
    assert quota.admit("e", 0.0)
    assert not quota.admit("e", 1.0)
    assert quota.ended(10.0) == [Suppressed("e", 1)]
    assert quota.admit("e", 11.0)


def test_lines_after_an_ended_window_wait_for_its_summary() -> None:
    """A line arriving once the window is over but before its summary was written
    joins that summary rather than slipping through uncounted."""
    quota = LogQuota(burst=1, window=10.0)
    quota.admit("e", 0.0)
    quota.admit("e", 1.0)
    assert not quota.admit("e", 12.0)
    assert quota.ended(12.0) == [Suppressed("e", 2)]


def test_log_limited_writes_the_admitted_lines_and_one_summary() -> None:
    quota = LogQuota(burst=2, window=10.0)
    logger = structlog.get_logger("quota-test")
    with capture_logs() as logs:
        for n in range(1000):
            log_limited(quota, logger, "warning", "console_command_rejected", now=n * 0.001,
                        n=n)
        log_limited(quota, logger, "info", "console_command", now=20.0)
    events = [(e["event"], e["log_level"]) for e in logs]
    assert events == [("console_command_rejected", "warning")] * 2 + [
        (SUMMARY_EVENT, "warning"), ("console_command", "info")]
    summary = logs[2]
    assert summary["event"] == SUMMARY_EVENT
    assert summary["what"] == "console_command_rejected"
    assert summary["count"] == 998
    assert summary["window"] == 10.0
