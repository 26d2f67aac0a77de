"""Table settings and rule profiles (RULES.md settings, CONFORMANCE.md ``table`` line).

Where the seed documents disagree, RULES.md lists both readings as a profile
setting; the defaults here are the ones RULES.md marks.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

BringInTiebreak = Literal["suit", "position"]


class RuleProfile(BaseModel):
    """House-rule choices the seeds disagree on (RULES.md)."""

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
        default=3, ge=0, description="Raises allowed per round after the bet/completion."
    )
    heads_up_unlimited_raises: bool = Field(
        default=False, description="Lift the raise cap when only two players remain."
    )
    tournament: bool = Field(
        default=False,
        description="Tournament rules: a down card dealt face up is a misdeal (rule 5).",
    )


class TableSettings(BaseModel):
    """Seats and stakes of one table plus its rule profile."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seats: int = Field(default=8, ge=2, le=8, description="Seats at the table (2..8).")
    ante: int = Field(default=1, ge=0, description="Ante per player.")
    bring_in: int = Field(default=2, ge=0, description="Bring-in amount.")
    small_bet: int = Field(default=5, ge=1, description="Small bet (3rd and 4th street).")
    big_bet: int = Field(default=10, ge=1, description="Big bet (5th, 6th and 7th street).")
    rules: RuleProfile = Field(default_factory=RuleProfile)
    auto_hands: bool = Field(
        default=False,
        description="No console: a hand starts when the first card lands on a clear table,"
        " its players are the seats dealt in the first round, and it ends when the table"
        " is clear again (the daemon's card-only mode; journals record this setting).",
    )
