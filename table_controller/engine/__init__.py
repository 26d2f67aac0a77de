"""The pure rules engine: zone events in, table state, game events and alerts out.

Nothing here does I/O, reads a clock, starts a thread or logs: time arrives
inside the events (``at``), and everything the engine decides comes back as
return values. That is what makes replay, simulation and tests exact.
"""

from table_controller.engine.alerts import Alert, AlertCode, Notice
from table_controller.engine.dealing import DealingEngine, HandState, SeatState, SeatStatus
from table_controller.engine.outputs import EngineOutput, GameEvent, GameEventKind
from table_controller.engine.settings import RuleProfile, TableSettings

__all__ = [
    "Alert",
    "AlertCode",
    "DealingEngine",
    "EngineOutput",
    "GameEvent",
    "GameEventKind",
    "HandState",
    "Notice",
    "RuleProfile",
    "SeatState",
    "SeatStatus",
    "TableSettings",
]
