"""One alert vocabulary (issue 10): every code, engine's and daemon's, in one table
with its severity; the docs table is that table; no alert is published with a code
written as a bare string.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from table_controller.domain.engine.alerts import (
    NOTICE_CODES,
    RULE_OF,
    SEVERITY_ORDER,
    VOCABULARY,
    Alert,
    AlertCode,
    Notice,
    Severity,
    Source,
    alert_severity,
    vocabulary_markdown,
)
from table_controller.mqtt.payloads import AlertPayload, NoticePayload, OpenAlert
from table_controller.records.replay import replay_file

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "table_controller"
CONFORMANCE = ROOT / "docs" / "conformance.md"

ALERT_CALLS = frozenset({
    "_daemon_alert", "alert", "_alert", "_notice",
    "Alert", "Notice", "AlertPayload", "OpenAlert", "NoticePayload",
})
"""Callables that publish or build an alert or notice: their code argument is checked."""


def test_every_code_has_one_row() -> None:
    assert set(VOCABULARY) == set(AlertCode)
    assert {code: info.rule for code, info in VOCABULARY.items()} == RULE_OF
    assert {code for code, info in VOCABULARY.items() if info.severity is None} == NOTICE_CODES
    for code, info in VOCABULARY.items():
        assert info.meaning, code
        assert not {"\n", "|"} & set(info.meaning), code
        if info.source is Source.DAEMON:
            assert info.rule is None, code
            # The daemon's codes are alerts, but for presence's one observation (issue
            # 19: a cross-read tie nothing decided), which nobody must act on.
            assert (info.severity is not None) != (code is AlertCode.CROSS_READ_TIE), code
    assert tuple(Severity) == SEVERITY_ORDER


def test_conformance_codes_are_in_the_vocabulary() -> None:
    text = CONFORMANCE.read_text(encoding="utf-8")
    table = text[text.index("## Alert codes"):]
    rows = re.findall(r"^\| `([a-z_]+)` \|[^|]*\| ([^|]*) \|$", table, flags=re.MULTILINE)
    assert len(rows) >= 18
    for code, rules in rows:
        info = VOCABULARY[AlertCode(code)]  # every contract code is in the vocabulary
        allowed = {int(rule) for rule in re.findall(r"\d+", rules)}
        # ... with a rule the contract names (or none where it says "—")
        assert (info.rule in allowed) if allowed else info.rule is None, (code, rules)


def test_docs_table_is_the_vocabulary() -> None:
    docs = (ROOT / "docs" / "alerts.md").read_text(encoding="utf-8")
    assert vocabulary_markdown() in docs, (
        "docs/alerts.md is stale: paste table_controller.domain.engine.alerts.vocabulary_markdown()"
    )
    for page in ("README.md", "docs/engine.md", "docs/mqtt.md"):
        assert "alerts.md" in (ROOT / page).read_text(encoding="utf-8"), page


def _code_argument(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "code":
            return keyword.value
    return call.args[0] if call.args else None


def _bare_in(tree: ast.AST, where: str) -> list[tuple[str, int, str]]:
    """(file, line, code) of every alert built or published in ``tree`` with a string
    literal code, and of every constant naming an alert code as a string literal."""
    found = []
    codes = {code.value for code in AlertCode}
    module_level = set(getattr(tree, "body", []))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in ALERT_CALLS:
                continue
            argument = _code_argument(node)
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                found.append((where, node.lineno, argument.value))
        elif isinstance(node, ast.AnnAssign | ast.Assign) and node in module_level:
            # OVERFLOW_CODE: Final = "alert_queue_overflow": a second spelling. (Enum
            # members in class bodies are other vocabularies: GameEventKind's
            # community_card, the simulator's error kinds named after their alert.)
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            value = node.value
            if (isinstance(value, ast.Constant) and value.value in codes
                    and any(isinstance(t, ast.Name) and t.id.isupper() for t in targets)):
                found.append((where, node.lineno, str(value.value)))
    return sorted(found)


def _bare_codes() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "alerts.py" and path.parent.name == "engine":
            continue  # the vocabulary itself
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found += _bare_in(tree, str(path.relative_to(ROOT)))
    return found


def test_no_alert_code_is_a_bare_string() -> None:
    bare = _bare_codes()
    unknown = [entry for entry in bare if entry[2] not in {c.value for c in AlertCode}]
    assert not unknown, f"alert codes outside the vocabulary: {unknown}"
    assert not bare, f"alert codes written as strings instead of AlertCode members: {bare}"


def test_the_walk_finds_a_bare_string() -> None:
    # The walker itself: planted bare codes are found (a walk that silently matched
    # nothing would pass the test above for ever).
    planted = ast.parse(
        'self._daemon_alert("reader_offline", "x")\n'
        'OVERFLOW_CODE: Final = "alert_queue_overflow"\n'
        'AlertPayload(table="t", code="mqtt_typo", message="m")\n'
        'self._daemon_alert(AlertCode.READER_OFFLINE, "fine")\n'
    )
    assert [code for _, _, code in _bare_in(planted, "x.py")] == [
        "reader_offline", "alert_queue_overflow", "mqtt_typo"]


def test_payloads_take_the_severity_of_the_code() -> None:
    envelope = {"table": "t1", "hand": 1, "seq": 0, "ts": 0.0, "seat": None,
                "street": None, "rule": None, "message": "m"}
    built = AlertPayload.model_validate({**envelope, "code": "reader_offline"})
    assert built.severity is Severity.CRITICAL
    assert json.loads(built.model_dump_json())["severity"] == "critical"
    with pytest.raises(ValidationError, match="severity of missing_burn is error"):
        AlertPayload.model_validate({**envelope, "code": "missing_burn", "severity": "warning"})
    with pytest.raises(ValidationError, match="notice"):
        AlertPayload.model_validate({**envelope, "code": "community_card"})
    with pytest.raises(ValidationError):
        AlertPayload.model_validate({**envelope, "code": "not_a_code"})
    assert OpenAlert(code=AlertCode.ILLEGAL_BET, severity=Severity.WARNING,
                     message="m").severity is Severity.WARNING
    notice = NoticePayload.model_validate({**envelope, "code": "community_card"})
    assert "severity" not in notice.model_dump()
    with pytest.raises(ValueError, match="notice"):
        alert_severity(AlertCode.COMMUNITY_CARD)


def test_alert_records_carry_severity_notices_none() -> None:
    alert = Alert(AlertCode.TOO_MANY_CARDS, 3, 7, 18, "m")
    assert alert.as_dict() == {"code": "too_many_cards", "seat": 3, "street": 7, "rule": 18,
                               "message": "m", "severity": "critical"}
    assert "severity" not in Notice(AlertCode.COMMUNITY_CARD, None, 7, 15, "m").as_dict()


def test_replay_report_alerts_have_severity(tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text("\n".join([
        '{"op":"hand","players":[1,2]}',
        '{"op":"place","zone":"seat1.down","card":"As"}',
        '{"op":"place","zone":"seat1.down","card":"As"}',
        '{"op":"place","zone":"seat2.up","card":"Kd"}',
    ]) + "\n")
    (hand,) = replay_file(script)["hands"]
    assert hand["alerts"]
    for alert in hand["alerts"]:
        # CONFORMANCE's fields exactly as named, plus the extra severity.
        assert set(alert) == {"code", "seat", "street", "rule", "message", "severity"}
        assert alert["severity"] == VOCABULARY[AlertCode(alert["code"])].severity
