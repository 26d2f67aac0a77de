"""The archive's test feed is the issue-14 contract as the daemon publishes it: every
record, alert and change it sends validates against the daemon's own payload models
(payloads.py, branch i14-alerts), and the archive takes what those models produce."""

from __future__ import annotations

from feed import alert_message, change_message, hand_record

from table_controller.archive.store import parse_item
from table_controller.mqtt.payloads import (
    AlertChangePayload,
    AlertPayload,
    PublicHandRecord,
    SecureHandRecord,
)


def test_feed_records_are_the_daemon_models() -> None:
    for ended in ("fold", "showdown"):
        PublicHandRecord.model_validate(hand_record("t1", 3, ended=ended))
        SecureHandRecord.model_validate(hand_record("t1", 3, ended=ended, secure=True))
    PublicHandRecord.model_validate(hand_record(
        "t1", 4, alerts=[{"id": "t1:40", "code": "missing_burn", "severity": "error"}],
        notices=[{"code": "community_card", "message": "rule 15"}]))
    AlertPayload.model_validate(alert_message("t1", 41))
    AlertChangePayload.model_validate(change_message("t1", "t1:41", "acknowledged", seq=50,
                                                     ts=1.0))
    AlertChangePayload.model_validate(change_message("t1", "t1:41", "resolved", seq=51,
                                                     ts=2.0, note="burn found"))


def test_the_daemon_models_output_is_archived() -> None:
    record = PublicHandRecord.model_validate(hand_record("t1", 3)).model_dump(mode="json")
    item = parse_item("hand", "t1", record, secure=False, now=0.0)
    assert item.key == record["hand_id"]
    secure = SecureHandRecord.model_validate(hand_record("t1", 3, secure=True))
    kept = parse_item("hand", "t1", secure.model_dump(mode="json"), secure=True, now=0.0)
    assert kept.values["hand"]["record"]["down_cards"] == secure.down_cards
    raised = AlertPayload.model_validate(alert_message("t1", 41)).model_dump(mode="json")
    assert parse_item("alert", "t1", raised, secure=False, now=0.0).key == "t1:41"


def test_an_alert_with_the_models_empty_id_gets_the_contract_id() -> None:
    """Regression: AlertPayload's ``id`` defaults to ""; every such alert must not
    share the one primary key "" (it takes ``<table>:<seq>``)."""
    payload = {**alert_message("t1", 41), "id": ""}
    assert parse_item("alert", "t1", payload, secure=False, now=0.0).key == "t1:41"
