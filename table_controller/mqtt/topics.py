"""MQTT topic names: the only module that builds topic strings.

Every topic of a table lives under the versioned root ``stud/v1/<table>/``::

    status             retained  online / offline / lost (the MQTT will)
    secure/claim       retained  which daemon publishes as this table (issue 21)
    state              retained  public snapshot (up cards, number of down cards)
    events                       public event stream
    secure/state       retained  snapshot with down cards (production room only)
    secure/events                event stream with down cards
    alerts                       dealing errors, QoS 1
    alerts/open        retained  every alert not yet resolved (issue 14)
    alerts/changes               one acknowledgement or resolution of an alert
    dealer             retained  the dealer on duty
    hands                        a finished hand's record, no unshown down card
    secure/hands                 the same record with every down card
    notices                      what needs no action (rule 15, ...)
    secure/notices               every notice, also those computed from down cards
    readers/<reader>   retained  one reader's link status
    readers/<reader>/stats  -    one reader's figures, every 5 s (counts only)
    cmd/rebirth                  command: republish the full retained set
    cmd/<name>                   console commands (MQTT 5 request/response)
    reply/<client>               the reply to one console client's command: the
                                 only place a reply may go (:meth:`TableTopics.reply_problem`)

Everything under ``secure/`` carries down-card identities; the broker ACL must
keep it away from the public (``deploy/acl``). :func:`is_secure` is the one
test for that, so publishers and tests agree on what "secure" means.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

ROOT: Final = "stud/v1"
"""Versioned root; a breaking payload change moves to ``stud/v2``."""

SECURE_LEVEL: Final = "secure"
"""The topic level under a table that marks production-only topics."""

_LEVEL_RE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# One topic level: no '/', no wildcards '+'/'#', no spaces, bounded length.
# A table or reader id that could contain '/' or '#' would let a config value
# escape its own subtree (and its ACL), so ids are checked here.


MAX_NAME_SHOWN: Final = 64
"""Characters of a hostile command name quoted back in replies and logs: a topic
may be 65,535 bytes long, and echoing it whole would let a requester inflate
every reply, log line and alert it causes."""


class TopicError(ValueError):
    """A table id, reader id, command name or client id cannot be used as a topic level."""


def check_level(value: str, what: str) -> str:
    """Return ``value`` if it is a safe single topic level, else raise :class:`TopicError`.

    Allowed: 1..64 characters from ``A-Z a-z 0-9 _ . -``.
    """
    if not _LEVEL_RE.fullmatch(value):
        raise TopicError(
            f"bad {what} {value!r}: use 1-64 characters from A-Z a-z 0-9 _ . -"
            " (no '/', '+', '#' or spaces)"
        )
    return value


class TopicKind(Enum):
    """What a table's topic carries (:meth:`TableTopics.parse`)."""

    STATUS = "status"
    CLAIM = f"{SECURE_LEVEL}/claim"
    STATE = "state"
    EVENTS = "events"
    ALERTS = "alerts"
    ALERTS_OPEN = "alerts/open"
    ALERTS_CHANGES = "alerts/changes"
    DEALER = "dealer"
    HANDS = "hands"
    NOTICES = "notices"
    SECURE_STATE = f"{SECURE_LEVEL}/state"
    SECURE_EVENTS = f"{SECURE_LEVEL}/events"
    SECURE_HANDS = f"{SECURE_LEVEL}/hands"
    SECURE_NOTICES = f"{SECURE_LEVEL}/notices"
    READER = "readers/<id>"
    READER_STATS = "readers/<id>/stats"
    REPLY = "reply/<client>"
    COMMAND = "cmd/<name>"

    @property
    def secure(self) -> bool:
        """True for a kind that may carry down-card identities (``secure/...``)."""
        return self.value.startswith(f"{SECURE_LEVEL}/")


_FIXED_KINDS: Final = {kind.value: kind for kind in TopicKind if "<" not in kind.value}
"""The kinds whose topic is one fixed suffix after the table."""


@dataclass(frozen=True, slots=True)
class ParsedTopic:
    """A topic of some table: its table, kind and (reader, client, command) name."""

    table: str
    kind: TopicKind
    name: str | None = None
    """The reader id, the reply's client or the command name; None for the others."""


@dataclass(frozen=True, slots=True)
class TableTopics:
    """All topic names of one table, e.g. ``TableTopics("t1").state == "stud/v1/t1/state"``."""

    table: str

    def __post_init__(self) -> None:
        check_level(self.table, "table id")

    @property
    def base(self) -> str:
        """``stud/v1/<table>``, without a trailing slash."""
        return f"{ROOT}/{self.table}"

    @property
    def status(self) -> str:
        """Retained daemon status: ``online``, ``offline`` or ``lost`` (the will)."""
        return f"{self.base}/status"

    @property
    def claim(self) -> str:
        """Retained claim of the daemon publishing as this table (issue 21 item 6): under
        ``secure/``, since it names the daemon's host and process."""
        return f"{self.base}/{SECURE_LEVEL}/claim"

    @property
    def state(self) -> str:
        """Retained public snapshot of the table."""
        return f"{self.base}/state"

    @property
    def events(self) -> str:
        """Public event stream (not retained)."""
        return f"{self.base}/events"

    @property
    def secure_state(self) -> str:
        """Retained snapshot including down cards (production room only)."""
        return f"{self.base}/{SECURE_LEVEL}/state"

    @property
    def secure_events(self) -> str:
        """Event stream including down cards (production room only)."""
        return f"{self.base}/{SECURE_LEVEL}/events"

    @property
    def alerts(self) -> str:
        """Dealing errors as they happen (QoS 1, not retained)."""
        return f"{self.base}/alerts"

    @property
    def alerts_open(self) -> str:
        """Retained: every alert not yet resolved, with its state (issue 14)."""
        return f"{self.base}/alerts/open"

    @property
    def alerts_changes(self) -> str:
        """An alert acknowledged or resolved (not retained)."""
        return f"{self.base}/alerts/changes"

    @property
    def dealer(self) -> str:
        """Retained: the dealer on duty."""
        return f"{self.base}/dealer"

    @property
    def hands(self) -> str:
        """A finished hand's record, public part (not retained)."""
        return f"{self.base}/hands"

    @property
    def secure_hands(self) -> str:
        """A finished hand's record with every down card (production room only)."""
        return f"{self.base}/{SECURE_LEVEL}/hands"

    @property
    def notices(self) -> str:
        """What the engine observed that needs no action (not retained)."""
        return f"{self.base}/notices"

    @property
    def secure_notices(self) -> str:
        """Every notice, also those computed from down cards (production room only)."""
        return f"{self.base}/{SECURE_LEVEL}/notices"

    def reader(self, reader_id: str) -> str:
        """Retained status of reader ``reader_id``."""
        return f"{self.base}/readers/{check_level(reader_id, 'reader id')}"

    def reader_stats(self, reader_id: str) -> str:
        """Periodic figures of reader ``reader_id`` (not retained)."""
        return f"{self.reader(reader_id)}/stats"

    @property
    def readers_filter(self) -> str:
        """Subscription filter matching every reader status of this table."""
        return f"{self.base}/readers/+"

    @property
    def reader_stats_filter(self) -> str:
        """Subscription filter matching every reader's periodic figures of this table."""
        return f"{self.base}/readers/+/stats"

    @property
    def cmd_rebirth(self) -> str:
        """Command: the daemon republishes its full retained set."""
        return self.cmd("rebirth")

    def cmd(self, name: str) -> str:
        """Command topic ``cmd/<name>`` (console commands use MQTT 5 request/response)."""
        return f"{self.base}/cmd/{check_level(name, 'command name')}"

    def reply(self, client_id: str) -> str:
        """Topic ``reply/<client_id>`` a console client names as its *Response Topic*."""
        return f"{self.base}/reply/{check_level(client_id, 'client id')}"

    @property
    def cmd_filter(self) -> str:
        """Subscription filter matching every command topic of this table."""
        return f"{self.base}/cmd/#"

    @staticmethod
    def parse(topic: str) -> ParsedTopic | None:
        """What the topic name ``topic`` is, for any table; ``None`` if it is no
        topic of ours. The one parser of topic names: every router (the daemon's
        commands, the services' followers) derives from it, as every name is built
        by the properties above.

        ``cmd/`` takes whatever follows as the command's name (see
        :meth:`command_name`); a reader id or reply client must be one safe level.
        """
        root = f"{ROOT}/"
        if not topic.startswith(root):
            return None
        table, _, rest = topic[len(root):].partition("/")
        if not _LEVEL_RE.fullmatch(table) or not rest:
            return None
        kind = _FIXED_KINDS.get(rest)
        if kind is not None:
            return ParsedTopic(table, kind)
        if rest.startswith("cmd/"):
            return ParsedTopic(table, TopicKind.COMMAND, rest[len("cmd/"):])
        levels = rest.split("/")
        if len(levels) == 2 and levels[0] == "reply" and _LEVEL_RE.fullmatch(levels[1]):
            return ParsedTopic(table, TopicKind.REPLY, levels[1])
        if levels[0] == "readers" and len(levels) in (2, 3) and _LEVEL_RE.fullmatch(levels[1]):
            if len(levels) == 2:
                return ParsedTopic(table, TopicKind.READER, levels[1])
            if levels[2] == "stats":
                return ParsedTopic(table, TopicKind.READER_STATS, levels[1])
        return None

    def command_name(self, topic: str) -> str | None:
        """What follows ``cmd/`` in a topic of this table, else ``None`` (not a command).

        Every topic under ``cmd/`` is a command, whatever follows: an empty
        name, several levels or a very long one is returned as it is, so the
        daemon answers it ``unknown_command`` (docs/console.md) instead of
        ignoring it. Use :func:`shown_name` before quoting it.
        """
        parsed = self.parse(topic)
        if parsed is None or parsed.kind is not TopicKind.COMMAND or parsed.table != self.table:
            return None
        return parsed.name

    @property
    def reply_prefix(self) -> str:
        """``stud/v1/<table>/reply/``: every console reply goes to one level below it."""
        return f"{self.base}/reply/"

    def reply_problem(self, topic: str) -> str | None:
        """Why the daemon may not publish a console reply on ``topic``; ``None`` if it may.

        A reply goes only to ``stud/v1/<table>/reply/<client>`` of *this* table,
        with ``<client>`` one safe topic level (:func:`check_level`). Anything else
        a requester names as its *Response Topic* (empty, a wildcard, ``$SYS/...``,
        the public ``state``, another table's tree) is refused: publishing there
        would forge table data, make the broker drop the daemon (protocol error
        on an empty or wildcard topic name), or raise inside the daemon.
        """
        if not topic:
            return "the response topic is empty"
        prefix = self.reply_prefix
        if not topic.startswith(prefix):
            return f"a reply may only go to {prefix}<client>, not {shown_name(topic)!r}"
        if not _LEVEL_RE.fullmatch(topic[len(prefix) :]):
            return (
                f"the response topic {shown_name(topic)!r} must be {prefix}<client> with"
                " <client> 1-64 characters from A-Z a-z 0-9 _ . - (one level, no wildcard)"
            )
        return None

    def reply_client(self, topic: str | None) -> str | None:
        """The ``<client>`` of a usable response topic ``reply/<client>`` (see
        :meth:`reply_problem`), else ``None``: whose console queue a request joins."""
        if topic is None or self.reply_problem(topic) is not None:
            return None
        return topic[len(self.reply_prefix):]

    @property
    def all_filter(self) -> str:
        """Subscription filter for every topic of this table (secure ones included)."""
        return f"{self.base}/#"


def shown_name(text: str) -> str:
    """``text`` cut to :data:`MAX_NAME_SHOWN` characters (with a marker), for quoting."""
    if len(text) <= MAX_NAME_SHOWN:
        return text
    return f"{text[:MAX_NAME_SHOWN]}...({len(text)} characters)"


def is_secure(topic: str) -> bool:
    """True if ``topic`` (a topic name under :data:`ROOT`) may carry down-card identities.

    That is every topic whose level after the table id is ``secure``. A topic
    outside the root is not ours and is reported as not secure.
    """
    levels = topic.split("/")
    root = ROOT.split("/")
    if levels[: len(root)] != root or len(levels) < len(root) + 2:
        return False
    return levels[len(root) + 1] == SECURE_LEVEL


def every_table(suffix: str) -> str:
    """Subscription filter ``stud/v1/+/<suffix>``: one topic of every table on the broker
    (the floor dashboard discovers tables by it). ``suffix`` may hold ``+``/``#`` levels
    but never ``secure``: the floor's role cannot read it and must not ask."""
    if not suffix or suffix.split("/", maxsplit=1)[0] == SECURE_LEVEL:
        raise TopicError(f"bad every-table suffix {suffix!r}")
    return f"{ROOT}/+/{suffix}"


def pit_filters(suffix: str, tables: Sequence[str] = ()) -> list[str]:
    """Subscription filters for one topic of the ``tables`` of a pit: one
    ``stud/v1/<table>/<suffix>`` per table, in the order given; with no table, every
    table on the broker (:func:`every_table`). A floor instance that follows one pit
    asks the broker for its tables' messages only (docs/scaling.md "How to scale").
    Each table id must be one safe level (:func:`check_level`); ``suffix`` as for
    :func:`every_table` (never ``secure``)."""
    if not tables:
        return [every_table(suffix)]
    if suffix.split("/", maxsplit=1)[0] == SECURE_LEVEL or not suffix:
        raise TopicError(f"bad pit suffix {suffix!r}")
    return [f"{ROOT}/{check_level(table, 'table id')}/{suffix}" for table in tables]


ARCHIVE_LEVEL: Final = "_archive"
"""The level under :data:`ROOT` of the archive services' own topics (issue 14). It
cannot clash with a table: a table id may begin with ``_`` too, so deployments keep
``_archive`` out of their table ids (docs/archive.md)."""


@dataclass(frozen=True, slots=True)
class ArchiveTopics:
    """The topics a ``stud-table archive`` instance subscribes to and publishes on.

    ``tables``: the tables followed, or empty for every table on the broker (``+``).
    ``share_group``: if set, every filter is an MQTT 5 shared subscription
    ``$share/<group>/...``, so several instances split the messages between them.
    """

    instance: str
    tables: tuple[str, ...] = ()
    share_group: str | None = None

    def __post_init__(self) -> None:
        check_level(self.instance, "archive instance")
        for table in self.tables:
            check_level(table, "table id")
        if self.share_group is not None:
            check_level(self.share_group, "share group")

    @property
    def status(self) -> str:
        """Retained status of this instance: ``stud/v1/_archive/<instance>/status``."""
        return f"{ROOT}/{ARCHIVE_LEVEL}/{self.instance}/status"

    def filters(self, secure: bool) -> list[str]:
        """Subscription filters: the hand records (``secure/hands`` if ``secure``, else
        the public ``hands``), ``alerts`` and ``alerts/changes`` of the tables."""
        hands = f"{SECURE_LEVEL}/hands" if secure else "hands"
        levels = self.tables or ("+",)
        plain = [f"{ROOT}/{t}/{suffix}" for t in levels
                 for suffix in (hands, "alerts", "alerts/changes")]
        if self.share_group is None:
            return plain
        return [f"$share/{self.share_group}/{topic}" for topic in plain]

    @staticmethod
    def kind(topic: str) -> tuple[str, str] | None:
        """``(table, kind)`` of a message the archive takes, ``kind`` one of ``hand``,
        ``secure_hand``, ``alert``, ``change``; else ``None``."""
        parsed = TableTopics.parse(topic)
        if parsed is None or parsed.table == ARCHIVE_LEVEL:
            return None
        kind = _ARCHIVE_KINDS.get(parsed.kind)
        return None if kind is None else (parsed.table, kind)


_ARCHIVE_KINDS: Final = {TopicKind.HANDS: "hand", TopicKind.SECURE_HANDS: "secure_hand",
                         TopicKind.ALERTS: "alert", TopicKind.ALERTS_CHANGES: "change"}
"""The topics the archive takes, by kind, and its own name for each."""
