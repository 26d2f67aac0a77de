"""TableSettings and RuleProfile checked by plain code (issue 25) decide exactly as
their pydantic models: the same settings for what both accept, the same error (text
and location) for the rest, and pydantic's coercion where the plain check steps aside.

The pydantic models (``pydantic_models()``) are the reference: they are the models
these classes were before the plain check.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from table_controller.daemon.config import DaemonConfig
from table_controller.domain.engine.settings import (
    MAX_CHIPS,
    RuleProfile,
    TableSettings,
    pydantic_models,
    validate_settings,
)
from table_controller.domain.hands import Game

_ODD: st.SearchStrategy[object] = st.sampled_from(
    [None, "x", "3", 2.0, 2.5, True, False, [], {}, -1, MAX_CHIPS + 1])
_AMOUNT = st.one_of(st.integers(-2, 12), _ODD)
_RULES = st.dictionaries(
    st.sampled_from(["bring_in_tiebreak", "burn_before_third", "raise_cap",
                     "heads_up_unlimited_raises", "tournament", "extra"]),
    st.one_of(st.sampled_from(["suit", "position"]), st.booleans(), st.integers(-1, 101),
              _ODD),
)
_FIELDS = st.dictionaries(
    st.sampled_from(["seats", "ante", "bring_in", "small_bet", "big_bet", "rules", "game",
                     "auto_hands", "unread_stacks", "extra"]),
    st.one_of(_AMOUNT, st.sampled_from(["stud", "razz", "stud8", "holdem", Game.RAZZ]),
              st.booleans(), _RULES),
)


def _reference(model: str, fields: dict[str, Any]) -> tuple[str, Any]:
    """What the pydantic model makes of ``fields``: its fields or its errors."""
    try:
        checked = pydantic_models()[model].model_validate(fields)
    except ValidationError as exc:
        return "error", exc.errors(include_url=False, include_context=False)
    return "ok", _dump(checked)


def _dump(value: BaseModel | TableSettings | RuleProfile) -> dict[str, Any]:
    return value.model_dump()


def _plain(cls: type[TableSettings] | type[RuleProfile], fields: dict[str, Any]) -> tuple[str, Any]:
    try:
        settings = cls.model_validate(fields)
    except ValidationError as exc:
        return "error", exc.errors(include_url=False, include_context=False)
    assert type(settings) is cls
    if isinstance(settings, TableSettings):
        assert type(settings.rules) is RuleProfile
    return "ok", _dump(settings)


@given(_FIELDS)
def test_table_settings_decide_as_the_pydantic_model(fields: dict[str, Any]) -> None:
    """A ``table`` line's fields: same settings or same errors as pydantic's model."""
    assert _plain(TableSettings, fields) == _reference("TableSettings", fields)


@given(_RULES)
def test_rule_profile_decides_as_the_pydantic_model(fields: dict[str, Any]) -> None:
    """A ``rules`` object: same profile or same errors as pydantic's model."""
    assert _plain(RuleProfile, fields) == _reference("RuleProfile", fields)


def test_table_line_errors_are_one_line() -> None:
    """validate_settings words a bad line as settings_problem does (rules 2, 3)."""
    with pytest.raises(ValueError, match=r"^bring_in: must be smaller than small_bet"):
        validate_settings({"bring_in": 5})
    with pytest.raises(ValueError, match=r"^rules\.raise_cap: must be a whole number"):
        validate_settings({"rules": {"raise_cap": 101}})
    assert validate_settings({"game": "razz"}).game is Game.RAZZ


def test_settings_are_frozen_hashable_and_pickle() -> None:
    """Frozen values as the models were: equal by fields, hashable, picklable."""
    settings = TableSettings(seats=6, rules=RuleProfile(raise_cap=4), game=Game.STUD8)
    with pytest.raises(AttributeError):
        settings.seats = 7  # type: ignore[misc]
    assert settings == TableSettings.model_validate(settings.model_dump(mode="json"))
    assert hash(settings) == hash(pickle.loads(pickle.dumps(settings)))
    assert settings.model_copy(update={"seats": 5}).seats == 5
    assert settings.model_dump(mode="json")["game"] == "stud8"
    assert settings.rules.model_dump(exclude_defaults=True) == {"raise_cap": 4}
    with pytest.raises(ValidationError):
        settings.model_copy(update={"seats": 9})


def test_daemon_config_rules_are_the_profile() -> None:
    """The daemon config's ``[rules]`` validates through the profile's model (its
    errors and location) and keeps a RuleProfile, which serialises as before."""
    assert DaemonConfig.model_fields["rules"].annotation is RuleProfile
    adapter = TypeAdapter(RuleProfile)
    profile = adapter.validate_python({"raise_cap": 2, "bring_in_tiebreak": "position"})
    assert type(profile) is RuleProfile
    assert profile.raise_cap == 2
    assert adapter.validate_python(profile) == profile
    assert adapter.dump_python(profile) == profile.model_dump()
    assert adapter.json_schema()["properties"]["raise_cap"]["default"] == 3
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python({"raise_cap": 101})
    assert caught.value.errors()[0]["loc"] == ("raise_cap",)
