"""``stud-table simulate --game razz|stud8``: random hands of every game, with and without
betting, raise no false alert, and every injected error is still found (docs/rules.md
"Variants": the same deal and dealing rules, another bring-in, first to act, bet
sizes and showdown).

CI sizes are small; the figures of the long runs are in docs/engine.md.
"""

from __future__ import annotations

import json

import pytest

from table_controller.domain.engine.variants import Game
from table_controller.simulation.runner import simulate
from table_controller.tools.cli import main

HANDS = 150


@pytest.mark.parametrize("betting", [False, True], ids=["cards", "betting"])
@pytest.mark.parametrize("game", [Game.RAZZ, Game.STUD8])
def test_clean_random_hands_raise_no_alert(game: Game, betting: bool) -> None:
    report = simulate(HANDS, 7, {}, betting=betting, game=game)
    assert report.game == game.value
    assert report.clean_hands == HANDS
    assert report.false_alerts == {}, report.false_listed[:5]
    assert set(report.notices) <= {"community_card", "upcards_lifted", "beaten_on_board"}


@pytest.mark.parametrize("betting", [False, True], ids=["cards", "betting"])
@pytest.mark.parametrize("game", [Game.RAZZ, Game.STUD8])
def test_injected_errors_are_all_found_in_every_game(game: Game, betting: bool) -> None:
    from table_controller.simulation.kinds import CONSOLE_KINDS, DEAL_KINDS
    from table_controller.simulation.plan import parse_rates

    kinds = DEAL_KINDS + CONSOLE_KINDS if betting else DEAL_KINDS
    rates = parse_rates(["0.05"], kinds, betting=betting)
    report = simulate(HANDS, 11, rates, betting=betting, game=game)
    assert report.injected > HANDS // 2
    assert report.recall == 1.0, report.missed[:5]
    assert report.false_alerts == {}, report.false_listed[:5]


def test_rule19_notice_is_for_high_games_only() -> None:
    """In razz and stud8 a board never "already beats" a hand (its next card may pair;
    a hand beaten high may win the low), so the secret rule-19 notice is not raised."""
    for game in (Game.RAZZ, Game.STUD8):
        report = simulate(HANDS, 3, {}, betting=True, game=game)
        assert "beaten_on_board" not in report.notices


def test_cli_game_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--hands", "20", "--game", "razz", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["game"] == "razz"
    assert data["totals"]["false_alerts"] == 0
    assert main(["simulate", "--hands", "5", "--game", "stud8", "--mode", "daemon"]) == 2
    assert "--game runs in --mode fast only" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:  # argparse: a bad choice is a usage error
        main(["simulate", "--hands", "5", "--game", "omaha"])
    assert exited.value.code == 2
