"""Daemon config: the example loads, defaults apply, every error is one line naming file+key."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from table_controller.daemon.config import ConfigError, load_config
from table_controller.records.journal import Journal
from table_controller.table.config_file import read_toml

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "deploy" / "table.example.toml"

MINIMAL = """
[table]
id = "t1"
layout = "layout.toml"
decks = ["deck.toml"]

[stakes]
ante = 1
bring_in = 2
small_bet = 5
big_bet = 10

[journal]
directory = "journal"
"""


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A directory with a minimal valid config and the files it points at."""
    (tmp_path / "layout.toml").write_text("# layout\n")
    (tmp_path / "deck.toml").write_text("# deck\n")
    (tmp_path / "table.toml").write_text(MINIMAL)
    return tmp_path


def test_example_config_loads() -> None:
    config = load_config(EXAMPLE)
    assert config.table.id == "table-1"
    assert config.table.layout == ROOT / "hardware" / "layouts" / "table-8.toml"
    assert config.table.decks == [ROOT / "hardware" / "decks" / "example-deck.toml"]
    assert config.journal.directory == Path("/var/lib/stud-table")
    assert config.broker.client_id is None  # the publisher draws an unguessable id


def test_defaults_and_relative_paths(config_dir: Path) -> None:
    config = load_config(config_dir / "table.toml")
    assert config.table.layout == config_dir / "layout.toml"
    assert config.journal.directory == config_dir / "journal"
    assert config.table.presence_hold == 1.5
    assert config.rules.bring_in_tiebreak == "suit"
    assert config.rules.burn_before_third is False
    assert config.rules.raise_cap == 3
    assert config.rules.tournament is False
    assert config.broker.host == "localhost"
    assert config.broker.port == 1883
    assert config.broker.tls is None
    assert config.journal.fsync == "always"
    assert config.log.format == "json"
    assert config.log.level == "info"


def test_relative_paths_do_not_depend_on_cwd(
    config_dir: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert load_config(config_dir / "table.toml").table.decks == [config_dir / "deck.toml"]


def _error(config_dir: Path, text: str) -> str:
    path = config_dir / "table.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    return message.removeprefix(f"{path}: ")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("[journal]", "[broker]\nport = 70000\n[journal]",
         "broker.port: Input should be less than or equal to 65535"),
        ('id = "t1"', 'id = "t1/x"', "table.id: bad table id 't1/x'"),
        ('id = "t1"', "", "table.id: missing required key"),
        ('directory = "journal"', 'directory = "journal"\nfsnyc = "always"',
         "journal.fsnyc: unknown key"),
        ('directory = "journal"', 'directory = "journal"\nfsync = "sometimes"',
         "journal.fsync: Input should be 'always', 'batch' or 'never'"),
        ('decks = ["deck.toml"]', 'decks = ["deck.toml", "nope.toml"]',
         "table.decks[1]: file not found:"),
        ('layout = "layout.toml"', 'layout = "missing.toml"', "table.layout: file not found:"),
        # Issue 24: a directory given as a deck is said to be one, not "not found".
        ('decks = ["deck.toml"]', 'decks = ["."]', "table.decks[0]: is a directory, not a file:"),
        ("big_bet = 10", "big_bet = 4", "stakes.big_bet: must be at least small_bet"),
        # Issue 9 item 15: stakes the betting engine refuses are refused here, at start.
        ("bring_in = 2", "bring_in = 5", "stakes.bring_in: must be smaller than small_bet"),
        ("bring_in = 2", "bring_in = 6", "stakes.bring_in: must be smaller than small_bet"),
        ("ante = 1", "ante = 1" + "0" * 300, "stakes.ante: must be a whole number from 0"),
        ("[journal]", '[rules]\nbring_in_tiebreak = "colour"\n[journal]',
         "rules.bring_in_tiebreak: Input should be 'suit' or 'position'"),
        ("[journal]", '[broker]\npassword = "x"\n[journal]',
         "broker: password given without username"),
        ("[journal]", '[log]\nlevel = "loud"\n[journal]', "log.level: Input should be"),
        ("[journal]", "[extra]\nx = 1\n[journal]", "extra: unknown key"),
        ("ante = 1", 'ante = "one"', "stakes.ante: Input should be a valid integer"),
        # Issue 10: [rules] is the engine's RuleProfile, raise cap checked by the one check.
        ("[journal]", "[rules]\nraise_cap = 101\n[journal]",
         "rules.raise_cap: must be a whole number from 0 to 100"),
        ("[journal]", "[rules]\nraise_cap = -1\n[journal]",
         "rules.raise_cap: must be a whole number from 0 to 100"),
        ("[journal]", "[rules]\nraise_caps = 4\n[journal]", "rules.raise_caps: unknown key"),
    ],
)
def test_errors_name_file_key_and_problem(
    config_dir: Path, old: str, new: str, expected: str
) -> None:
    text = MINIMAL.replace(old, new)
    assert text != MINIMAL
    assert _error(config_dir, text).startswith(expected)


def test_toml_syntax_error_and_missing_file(config_dir: Path) -> None:
    message = _error(config_dir, MINIMAL + "\n[table\n")
    assert message.startswith("TOML syntax error:")
    assert "line" in message
    missing = config_dir / "absent.toml"
    with pytest.raises(ConfigError, match=rf"^{missing}: cannot read: No such file"):
        load_config(missing)


def test_tls_paths_resolve(config_dir: Path) -> None:
    shutil.copy(config_dir / "deck.toml", config_dir / "ca.pem")
    path = config_dir / "table.toml"
    path.write_text(
        MINIMAL + '\n[broker]\nusername = "d"\npassword = "p"\n[broker.tls]\nca_file = "ca.pem"\n'
    )
    config = load_config(path)
    assert config.broker.tls is not None
    assert config.broker.tls.ca_file == config_dir / "ca.pem"
    assert config.broker.username == "d"


@pytest.mark.parametrize("value", ["9" * 5000, "[" * 100_000])
def test_issue9_toml_huge_int_or_deep_nesting_is_one_line(config_dir: Path, value: str) -> None:
    """tomllib raises ValueError past Python's 4,300-digit int limit and RecursionError
    on deep arrays: both were tracebacks out of `stud-table run`."""
    message = _error(config_dir, MINIMAL + f"\n[extra]\nx = {value}\n")
    assert message.startswith("TOML syntax error: ")
    assert len(message) < 200


@pytest.mark.parametrize("value", ["9" * 5000, "[" * 100_000])
def test_issue9_layout_and_deck_toml_huge_int_or_deep_nesting(tmp_path: Path, value: str) -> None:
    """The same two tomllib exceptions through read_toml (layout and deck files)."""
    path = tmp_path / "layout.toml"
    path.write_text(f"x = {value}\n")
    with pytest.raises(ConfigError, match=rf"^{path}: not valid TOML: ") as caught:
        read_toml(path)
    assert "\n" not in str(caught.value)


def test_issue9_daemon_starts_over_a_journal_with_stakes_now_refused(tmp_path: Path) -> None:
    """A journal's table line written under the old, weaker stakes check (bring_in =
    small_bet passed) must not stop the daemon from starting once the config is fixed:
    the configuration's settings are used, as for any journaled settings that differ."""
    from table_controller.daemon.runner import Daemon, journal_path

    hardware = Path(__file__).resolve().parents[3] / "hardware"
    config_path = tmp_path / "table.toml"
    config_path.write_text(
        MINIMAL.replace('layout = "layout.toml"', f'layout = "{hardware}/layouts/table-2.toml"')
        .replace('decks = ["deck.toml"]', f'decks = ["{hardware}/decks/example-deck.toml"]')
    )
    config = load_config(config_path)
    path = journal_path(config)
    path.parent.mkdir(parents=True)
    with Journal.open(path) as journal:
        journal.append({"op": "table", "seats": 2, "ante": 1, "bring_in": 5, "small_bet": 5,
                        "big_bet": 10, "auto_hands": True}, at=1.0)
        journal.append({"op": "hand", "players": []}, at=2.0)
    daemon = Daemon(config)
    try:
        daemon._restore()  # raised ValueError: every start of the daemon failed
    finally:
        daemon.journal.close()


def test_issue10_rules_section_is_the_engines_rule_profile(config_dir: Path) -> None:
    """The [rules] section was a copy of RuleProfile (RulesConfig) copied field by field
    into the engine's settings; it is now the engine's model itself, so a profile
    setting cannot exist in one and not the other (heads_up_unlimited_raises did)."""
    from table_controller.daemon.runner import table_settings
    from table_controller.domain.engine.settings import RuleProfile
    from table_controller.table.layout import TableLayout

    path = config_dir / "table.toml"
    path.write_text(MINIMAL + "\n[rules]\nraise_cap = 4\nheads_up_unlimited_raises = true\n"
                    'bring_in_tiebreak = "position"\n')
    config = load_config(path)
    assert type(config.rules) is RuleProfile
    assert config.rules == RuleProfile(raise_cap=4, heads_up_unlimited_raises=True,
                                       bring_in_tiebreak="position")
    layout = TableLayout.model_construct(seats=2)
    assert table_settings(config, layout).rules is config.rules


def test_issue10_raise_cap_is_one_check_at_every_door() -> None:
    """Config, the script's table line and the betting engine refuse the same raise caps
    with the same words (the config allowed 0..20, the engine any cap >= 0)."""
    from table_controller.domain.engine.betting import BettingStructure
    from table_controller.domain.engine.settings import StakesError
    from table_controller.records.script import parse_settings

    for cap in (-1, 101):
        with pytest.raises(ValueError, match=r"rules\.raise_cap: must be a whole number from 0"):
            parse_settings({"rules": {"raise_cap": cap}})
        with pytest.raises(StakesError, match="must be a whole number from 0 to 100") as caught:
            BettingStructure(raise_cap=cap)
        assert caught.value.key == "raise_cap"
    for cap in (0, 3, 100):
        assert parse_settings({"rules": {"raise_cap": cap}}).rules.raise_cap == cap
        assert BettingStructure(raise_cap=cap).raise_cap == cap
    assert BettingStructure(raise_cap=None).raise_cap is None  # no cap (heads-up rule)
