"""Payload models: committed schemas are current, docs examples validate, secrecy is structural."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import mqtt_samples as sample
import pytest
from pydantic import ValidationError

from table_controller.mqtt.payloads import (
    PUBLIC_EVENT_ADAPTER,
    SCHEMAS,
    SECURE_EVENT_ADAPTER,
    PublicSeat,
    PublicState,
    ReaderStatus,
    SecureSeat,
    export_json_schemas,
    render_json_schemas,
)
from table_controller.records.journal import decode_line

ROOT = Path(__file__).resolve().parents[3]
SCHEMA_DIR = ROOT / "docs" / "schemas"
REGENERATE = (
    "python -c \"from table_controller.mqtt.payloads import export_json_schemas as e;"
    " e('docs/schemas')\""
)


def test_committed_schemas_are_up_to_date(tmp_path: Path) -> None:
    written = export_json_schemas(tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in SCHEMA_DIR.glob("*.json"))
    for path in written:
        committed = (SCHEMA_DIR / path.name).read_text()
        assert committed == path.read_text(), f"{path.name} is stale; run {REGENERATE}"


def _properties(schema: Any) -> set[str]:
    """Every property name anywhere in a JSON Schema."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                found |= set(value)
            found |= _properties(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= _properties(item)
    return found


def test_public_schemas_cannot_hold_down_cards_or_uids() -> None:
    schemas = {name: json.loads(text) for name, text in render_json_schemas().items()}
    for name, schema in schemas.items():
        assert not {"uid", "uids", "tag", "deck_map"} & _properties(schema), name
    assert "down" not in _properties(schemas["state.schema.json"])
    assert "down" in _properties(schemas["secure-state.schema.json"])
    public_events = schemas["event.schema.json"]["$defs"]
    assert "card" not in public_events["PublicCardDealtDownEvent"]["properties"]
    assert "card" not in public_events["PublicCardBurnedEvent"]["properties"]
    secure_events = schemas["secure-event.schema.json"]["$defs"]
    assert "card" in secure_events["SecureCardDealtDownEvent"]["properties"]


def test_public_state_refuses_secure_seats_and_down_keys() -> None:
    public, secure = sample.states()
    with pytest.raises(ValidationError, match="instance of PublicSeat"):
        PublicState(**{**public.model_dump(), "seats": list(secure.seats)})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        PublicState(**{**public.model_dump(), "seats": [s.model_dump() for s in secure.seats]})
    assert not isinstance(secure.seats[0], PublicSeat)
    assert isinstance(secure.seats[0], SecureSeat)


def test_public_event_refuses_a_down_card() -> None:
    public, secure = sample.down_event()
    with pytest.raises(ValidationError, match="Extra inputs"):
        PUBLIC_EVENT_ADAPTER.validate_python(secure.model_dump())
    assert PUBLIC_EVENT_ADAPTER.validate_json(public.model_dump_json()) == public
    assert SECURE_EVENT_ADAPTER.validate_json(secure.model_dump_json()) == secure


@pytest.mark.parametrize(
    ("field", "value"),
    [("card", "1s"), ("card", "AS"), ("seat", 9), ("seat", 0)],
)
def test_card_codes_and_seats_are_checked(field: str, value: object) -> None:
    event = {"table": "t1", "hand": 1, "seq": 1, "ts": 0.0, "kind": "card_dealt_up",
             "seat": 1, "card": "As", field: value}
    with pytest.raises(ValidationError):
        PUBLIC_EVENT_ADAPTER.validate_python(event)


def test_reader_status_refuses_uid_and_bad_zone() -> None:
    good = sample.reader().model_dump()
    with pytest.raises(ValidationError, match="Extra inputs"):
        ReaderStatus(**good, uid="E0040150A1B2C3D4")
    with pytest.raises(ValidationError):
        ReaderStatus(**{**good, "zones": ["seat9.up"]})


def _doc_examples(doc: str) -> list[tuple[str, str]]:
    return re.findall(r"<!-- schema: ([a-z-]+) -->\n```json\n(.*?)```", doc, flags=re.S)


def test_every_example_in_docs_mqtt_validates() -> None:
    examples = _doc_examples((ROOT / "docs" / "mqtt.md").read_text())
    assert {name for name, _ in examples} == set(SCHEMAS)
    for name, text in examples:
        SCHEMAS[name].validate_json(text)


def test_example_in_docs_journal_is_a_valid_record() -> None:
    doc = (ROOT / "docs" / "journal.md").read_text()
    line = re.search(r'```json\n(\{"at".*?)\n```', doc)
    assert line is not None
    assert decode_line(line.group(1).encode())["op"] == "place"
