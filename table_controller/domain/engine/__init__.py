"""The pure rules engine: zone events in, table state, game events and alerts out.

Nothing here does I/O, reads a clock, starts a thread or logs: time arrives
inside the events (``at``), and everything the engine decides comes back as
return values. That is what makes replay, simulation and tests exact.
"""

from table_controller.domain.engine.alerts import Alert, AlertCode, Notice
from table_controller.domain.engine.dealing import DealingEngine, HandTracker, NoHandError
from table_controller.domain.engine.hand import HandState, Phase, SeatState, SeatStatus
from table_controller.domain.engine.outputs import EngineOutput, GameEvent, GameEventKind, ReplyCode
from table_controller.domain.engine.settings import RuleProfile, TableSettings

__all__ = [
    "Alert",
    "AlertCode",
    "DealingEngine",
    "EngineOutput",
    "GameEvent",
    "GameEventKind",
    "HandState",
    "HandTracker",
    "NoHandError",
    "Notice",
    "Phase",
    "ReplyCode",
    "RuleProfile",
    "SeatState",
    "SeatStatus",
    "TableSettings",
]
