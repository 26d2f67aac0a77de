"""Table settings and rule profiles (docs/rules.md settings, docs/conformance.md ``table`` line).

Where the seed documents disagree, docs/rules.md lists both readings as a profile
setting; the defaults here are the ones docs/rules.md marks.

Both classes are frozen dataclasses checked by plain code, and pydantic is imported
only when that check is not enough: importing pydantic and building two models was
about 200 ms of the 315 ms a ``stud-table replay`` of a short script took (issue 25).
A value the plain check does not pass exactly as given (a wrong type, a number out of
range, a string to coerce, an unknown key) goes to the pydantic models
(:func:`pydantic_models`), so coercion and every error (its text, its location) are
pydantic's, as before; they also give a daemon config's ``[rules]`` its schema.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Self

from table_controller.domain.hands import Game

if TYPE_CHECKING:
    from pydantic import BaseModel, GetCoreSchemaHandler, ValidationError
    from pydantic_core import CoreSchema

BringInTiebreak = Literal["suit", "position"]

MAX_RAISE_CAP: Final = 100
"""The largest raise cap a table takes: a guard against typos (a cap of 33 for 3),
far beyond the three of the house rules (docs/rules.md "Bet sizes")."""

MAX_CHIPS: Final = 10**15
"""The largest ante, bet or stack a table takes. Far beyond any real table; a bound
keeps a typo of hundreds of digits a clear error instead of a number that
breaks float conversions downstream."""


def settings_problem(exc: ValidationError) -> str:
    """One line naming the first bad setting of a :class:`TableSettings` validation
    (``bring_in: must be smaller than small_bet (rules 2, 3)``): pydantic's own text
    spans several lines and a URL."""
    first = exc.errors(include_url=False)[0]
    loc = [str(part) for part in first["loc"]]
    cause = first.get("ctx", {}).get("error")
    if isinstance(cause, StakesError) and loc[-1:] != [cause.key]:
        loc.append(cause.key)  # a cross-field check: name the amount
    key = ".".join(loc) or "table"
    return f"{key}: {str(first['msg']).removeprefix('Value error, ')}"


class StakesError(ValueError):
    """Fixed-limit stakes the betting engine cannot play; ``key`` names the bad amount."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key


def check_raise_cap(raise_cap: int | None) -> None:
    """Raise :class:`StakesError` unless ``raise_cap`` (None: no cap) is a playable cap."""
    if raise_cap is not None and (isinstance(raise_cap, bool)
                                  or not 0 <= raise_cap <= MAX_RAISE_CAP):
        raise StakesError("raise_cap", f"must be a whole number from 0 to {MAX_RAISE_CAP}")


def check_stakes(
    ante: int, bring_in: int, small_bet: int, big_bet: int, raise_cap: int | None = None
) -> None:
    """Raise :class:`StakesError` unless these stakes make a fixed-limit stud game.

    The one check of the stakes: the script's ``table`` line (TableSettings), the
    daemon's ``[stakes]`` (config.StakesConfig) and the betting engine
    (BettingStructure) all call it, so a table the engine would refuse mid-hand
    is refused where it is configured (issue 9, item 15; issue 10). The raise cap
    (RuleProfile, the config's ``[rules]``) goes through :func:`check_raise_cap`,
    also called from here.
    """
    check_raise_cap(raise_cap)
    for key, value, least in (("ante", ante, 0), ("bring_in", bring_in, 0),
                              ("small_bet", small_bet, 1), ("big_bet", big_bet, 1)):
        if not least <= value <= MAX_CHIPS:
            raise StakesError(key, f"must be a whole number from {least} to {MAX_CHIPS}")
    if big_bet < small_bet:
        raise StakesError("big_bet", "must be at least small_bet")
    if bring_in >= small_bet:
        # docs/rules.md 2-3: the bring-in is less than a bet; bringing in for a full
        # small bet is a completion.
        raise StakesError("bring_in", "must be smaller than small_bet (rules 2, 3)")


def stacks_problem(stacks: Mapping[int, int] | None, ante: int) -> str | None:
    """Why these starting stacks cannot be dealt in at a table with this ante, or None.

    The one check of a hand's stacks, for a script's ``hand`` line and the
    console's ``hand`` command alike: with no ante, a player with no chips at all
    has nothing to play for, and the betting engine refuses the hand.
    """
    if ante == 0 and stacks:
        broke = [seat for seat, chips in sorted(stacks.items()) if chips == 0]
        if broke:
            return (f"stacks of seat {broke[0]} is 0 and the ante is 0: a player needs chips"
                    " to be dealt in")
    return None


_TIEBREAKS: Final = ("suit", "position")
_GAMES: Final = {game.value: game for game in Game}


def _whole(value: object, least: int, most: int) -> bool:
    """``value`` is an ``int`` (not a bool) from ``least`` to ``most``: what pydantic
    passes unchanged for a bounded ``int`` field."""
    return type(value) is int and least <= value <= most


class _Settings:
    """The pydantic-like surface both settings classes share (``model_validate``,
    ``model_dump``, ``model_copy``, a pydantic schema): the callers and the daemon's
    config models use them as they used the pydantic models."""

    __slots__ = ()
    _MODEL: ClassVar[str]
    """The name of this class's pydantic model in :func:`pydantic_models`."""

    def _plain_check(self) -> dict[str, Any] | None:
        """The fields to set (values converted, e.g. a game name to :class:`Game`) if
        every field passes the plain check, else None (pydantic decides)."""
        raise NotImplementedError

    def __post_init__(self) -> None:
        checked = self._plain_check()
        if checked is None:  # pydantic coerces or raises its ValidationError
            model = pydantic_models()[self._MODEL].model_validate(_model_input(self))
            checked = _from_model(model)
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @classmethod
    def model_validate(cls, obj: object) -> Self:
        """Like pydantic's: an instance as is, a mapping of fields checked."""
        if isinstance(obj, cls):
            return obj
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        if isinstance(obj, Mapping) and all(type(key) is str and key in names for key in obj):
            try:
                return cls(**obj)
            except ValueError:  # pydantic's ValidationError: raise it for ``obj`` itself
                pass  # (the error's input is then what was given, not every field)
            obj = {key: _as_input(value) for key, value in obj.items()}
        pydantic_models()[cls._MODEL].model_validate(obj)  # raises
        raise AssertionError("pydantic accepted what the fields refuse")  # pragma: no cover

    def model_dump(self, *, mode: Literal["python", "json"] = "python",
                   exclude_defaults: bool = False) -> dict[str, Any]:
        """The fields as a dict, nested settings as dicts, the game as its name in
        ``json`` mode; ``exclude_defaults`` leaves out fields at their default."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if exclude_defaults and value == _default(f):
                continue
            if isinstance(value, _Settings):
                value = value.model_dump(mode=mode)
            elif mode == "json" and isinstance(value, Game):
                value = value.value
            out[f.name] = value
        return out

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update``'s fields changed (and checked)."""
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler
                                     ) -> CoreSchema:
        """As a field of a pydantic model (the daemon config's ``[rules]``): validated
        and serialised by this class's pydantic model, so the errors and the schema
        are the model's; the value kept is an instance of this class."""
        from pydantic_core import core_schema  # noqa: PLC0415 - pydantic on demand

        model = pydantic_models()[cls._MODEL]
        inner = handler(model)

        def to_input(value: Any) -> Any:
            return _model_input(value) if isinstance(value, cls) else value

        def to_plain(value: Any) -> Any:
            return cls(**_from_model(value))

        def serialise(value: Any, nxt: Callable[[Any], Any]) -> Any:
            return nxt(model.model_validate(to_input(value)))

        return core_schema.no_info_before_validator_function(
            to_input,
            core_schema.no_info_after_validator_function(to_plain, inner),
            serialization=core_schema.wrap_serializer_function_ser_schema(
                serialise, schema=inner),
        )


def _model_input(settings: _Settings) -> dict[str, Any]:
    """The fields as given, nested settings as dicts (pydantic's input)."""
    return {f.name: _as_input(getattr(settings, f.name))
            for f in dataclasses.fields(settings)}  # type: ignore[arg-type]


def _as_input(value: object) -> object:
    return value.model_dump() if isinstance(value, _Settings) else value


def _default(f: dataclasses.Field[Any]) -> object:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def _from_model(model: BaseModel) -> dict[str, Any]:
    """A validated pydantic model's fields, nested models as this module's classes."""
    out: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        if name == "rules":
            value = RuleProfile(**_from_model(value))
        out[name] = value
    return out


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RuleProfile(_Settings):
    """House-rule choices the seeds disagree on (docs/rules.md).

    The one rule-profile model: a script's ``table`` line (``rules``), the daemon's
    ``[rules]`` section (config.DaemonConfig) and the engine all use it as is.
    The fields' descriptions are those of the pydantic model (:func:`pydantic_models`).
    """

    _MODEL: ClassVar[str] = "RuleProfile"

    bring_in_tiebreak: BringInTiebreak = "suit"
    burn_before_third: bool = False
    raise_cap: int = 3
    heads_up_unlimited_raises: bool = False
    tournament: bool = False

    def _plain_check(self) -> dict[str, Any] | None:
        if not (type(self.bring_in_tiebreak) is str and self.bring_in_tiebreak in _TIEBREAKS
                and type(self.burn_before_third) is bool
                and _whole(self.raise_cap, 0, MAX_RAISE_CAP)  # check_raise_cap's bounds
                and type(self.heads_up_unlimited_raises) is bool
                and type(self.tournament) is bool):
            return None
        return {}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TableSettings(_Settings):
    """Seats and stakes of one table plus its rule profile.

    The fields' descriptions and bounds are those of the pydantic model
    (:func:`pydantic_models`); the stakes go through :func:`check_stakes`.
    """

    _MODEL: ClassVar[str] = "TableSettings"

    seats: int = 8
    ante: int = 1
    bring_in: int = 2
    small_bet: int = 5
    big_bet: int = 10
    rules: RuleProfile = dataclasses.field(default_factory=RuleProfile)
    game: Game = Game.STUD
    auto_hands: bool = False
    unread_stacks: bool = False

    def _plain_check(self) -> dict[str, Any] | None:
        rules: object = self.rules  # a dict too: a table line's ``rules``
        if type(rules) is dict and all(type(key) is str for key in rules):
            try:
                rules = RuleProfile(**rules)
            except Exception:  # pydantic names the bad key with its location
                return None
        game = self.game if type(self.game) is Game else (
            _GAMES.get(self.game) if type(self.game) is str else None)
        if not (_whole(self.seats, 2, 8) and _whole(self.ante, 0, MAX_CHIPS)
                and _whole(self.bring_in, 0, MAX_CHIPS)
                and _whole(self.small_bet, 1, MAX_CHIPS)
                and _whole(self.big_bet, 1, MAX_CHIPS)
                and type(rules) is RuleProfile and game is not None
                and type(self.auto_hands) is bool and type(self.unread_stacks) is bool):
            return None
        try:
            check_stakes(self.ante, self.bring_in, self.small_bet, self.big_bet)
        except StakesError:
            return None  # pydantic's error, located as before
        return {"rules": rules, "game": game}


def validate_settings(fields: Mapping[str, Any]) -> TableSettings:
    """A ``table`` line's fields as :class:`TableSettings`; a bad one raises
    ``ValueError`` with :func:`settings_problem`'s one line."""
    try:
        settings: TableSettings = TableSettings.model_validate(fields)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        from pydantic import ValidationError  # noqa: PLC0415 - loaded: it raised

        if not isinstance(exc, ValidationError):
            raise
        raise ValueError(settings_problem(exc)) from None
    return settings


@functools.cache
def pydantic_models() -> dict[str, type[BaseModel]]:
    """The pydantic models of :class:`RuleProfile` and :class:`TableSettings`, built on
    first use: they coerce and word the errors of what the plain check does not pass,
    and give the daemon config's ``[rules]`` its schema."""
    from pydantic import (  # noqa: PLC0415 - the point: pydantic only when needed
        BaseModel,
        ConfigDict,
        Field,
        field_validator,
        model_validator,
    )

    class RuleProfile(BaseModel):
        """House-rule choices the seeds disagree on (docs/rules.md)."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        bring_in_tiebreak: BringInTiebreak = Field(
            default="suit",
            description="Tie between equal low upcards: 'suit' (clubs lowest; seeds 000/002,"
            " casino standard, default) or 'position' (nearest the dealer's left; seeds"
            " 001/004).",
        )
        burn_before_third: bool = Field(
            default=False, description="Burn a card before 3rd street as well (default off)."
        )
        raise_cap: int = Field(
            default=3,
            description="Raises allowed per round after the bet/completion (0..MAX_RAISE_CAP).",
        )
        heads_up_unlimited_raises: bool = Field(
            default=False, description="Lift the raise cap when only two players remain."
        )
        tournament: bool = Field(
            default=False,
            description="Tournament rules: a down card dealt face up is a misdeal (rule 5).",
        )

        @field_validator("raise_cap")
        @classmethod
        def _cap(cls, value: int) -> int:
            check_raise_cap(value)  # the betting engine's own check
            return value

    class TableSettings(BaseModel):
        """Seats and stakes of one table plus its rule profile."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        seats: int = Field(default=8, ge=2, le=8, description="Seats at the table (2..8).")
        ante: int = Field(default=1, ge=0, le=MAX_CHIPS, description="Ante per player.")
        bring_in: int = Field(default=2, ge=0, le=MAX_CHIPS, description="Bring-in amount.")
        small_bet: int = Field(default=5, ge=1, le=MAX_CHIPS,
                               description="Small bet (3rd and 4th street).")
        big_bet: int = Field(default=10, ge=1, le=MAX_CHIPS,
                             description="Big bet (5th, 6th and 7th street).")
        rules: RuleProfile = Field(default_factory=RuleProfile)
        game: Game = Field(
            default=Game.STUD,
            description="The game dealt (docs/rules.md \"Variants\"): 'stud' (Seven Card"
            " Stud, default), 'razz' or 'stud8' (Seven Card Stud Hi-Lo, eight or better).",
        )
        auto_hands: bool = Field(
            default=False,
            description="No console: a hand starts when the first card lands on a clear"
            " table, its players are the seats dealt in the first round, and it ends when"
            " the table is clear again (the daemon's card-only mode; journals record this"
            " setting).",
        )
        unread_stacks: bool = Field(
            default=False,
            description="The readers may miss a card altogether (a stack of 2-3 ISO 14443"
            " inlays detunes, a row of up cards, a dead tag): a seat one card behind the"
            " round was dealt it unread (notice card_unread) rather than skipped"
            " (out_of_order), unless its card comes right after the one dealt in its place."
            " Off (default): the deal order is checked strictly.",
        )

        @model_validator(mode="after")
        def _stakes(self) -> TableSettings:
            check_stakes(self.ante, self.bring_in, self.small_bet, self.big_bet)
            return self

    return {"RuleProfile": RuleProfile, "TableSettings": TableSettings}
