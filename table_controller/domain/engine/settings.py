"""Table settings and rule profiles (docs/rules.md settings, docs/conformance.md ``table`` line).

Where the seed documents disagree, docs/rules.md lists both readings as a profile
setting; the defaults here are the ones docs/rules.md marks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from table_controller.domain.hands import Game

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


class RuleProfile(BaseModel):
    """House-rule choices the seeds disagree on (docs/rules.md).

    The one rule-profile model: a script's ``table`` line (``rules``), the daemon's
    ``[rules]`` section (config.DaemonConfig) and the engine all use it as is.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    bring_in_tiebreak: BringInTiebreak = Field(
        default="suit",
        description="Tie between equal low upcards: 'suit' (clubs lowest; seeds 000/002, "
        "casino standard, default) or 'position' (nearest the dealer's left; seeds 001/004).",
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
        description="The game dealt (docs/rules.md \"Variants\"): 'stud' (Seven Card Stud,"
        " default), 'razz' or 'stud8' (Seven Card Stud Hi-Lo, eight or better).",
    )
    auto_hands: bool = Field(
        default=False,
        description="No console: a hand starts when the first card lands on a clear table,"
        " its players are the seats dealt in the first round, and it ends when the table"
        " is clear again (the daemon's card-only mode; journals record this setting).",
    )
    unread_stacks: bool = Field(
        default=False,
        description="The readers may miss a card altogether (a stack of 2-3 ISO 14443"
        " inlays detunes, a row of up cards, a dead tag): a seat one card behind the round"
        " was dealt it unread (notice card_unread) rather than skipped (out_of_order),"
        " unless its card comes right after the one dealt in its place. Off (default):"
        " the deal order is checked strictly.",
    )

    @model_validator(mode="after")
    def _stakes(self) -> TableSettings:
        check_stakes(self.ante, self.bring_in, self.small_bet, self.big_bet)
        return self
