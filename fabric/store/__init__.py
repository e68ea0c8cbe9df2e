"""The service's durable state: SQLAlchemy 2 Core on SQLite (embedded default) or PostgreSQL (production).

``Store.open(url)`` connects and creates, migrates or refuses the schema; its methods each run in their own
transaction, and ``Store.transaction()`` groups several.  See ``fabric.store.schema`` for the tables and
``fabric.store.migrations`` for versions.
"""

from fabric.remediation.muting import silence_matches
from fabric.store._base import Fence
from fabric.store._history import HistoryMark, HistoryRows
from fabric.store._outbox import OutboxEntry, OutboxFigures, TicketWriteKind
from fabric.store.core import ScopedStore, Store, Transaction, database_errors
from fabric.store.migrations import MIGRATIONS, SCHEMA_VERSION, Migration, SchemaReport
from fabric.store.records import (
    ACTIVE_TICKET_STATES,
    FINISHED_INTENT_STATES,
    BreakerState,
    BurninWindow,
    CursorRecord,
    DecisionRecord,
    Delivery,
    IntentRecord,
    IntentState,
    InvalidTransitionError,
    NewDelivery,
    OperatorRequest,
    RequestKind,
    SchemaError,
    SchemaTooNewError,
    Silence,
    StaleEpochError,
    StoreError,
    TicketRecord,
    TicketState,
)
from fabric.store.schema import METADATA

__all__ = [
    "ACTIVE_TICKET_STATES",
    "FINISHED_INTENT_STATES",
    "METADATA",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "BreakerState",
    "BurninWindow",
    "CursorRecord",
    "DecisionRecord",
    "Delivery",
    "Fence",
    "HistoryMark",
    "HistoryRows",
    "IntentRecord",
    "IntentState",
    "InvalidTransitionError",
    "Migration",
    "NewDelivery",
    "OperatorRequest",
    "OutboxEntry",
    "OutboxFigures",
    "RequestKind",
    "SchemaError",
    "SchemaReport",
    "SchemaTooNewError",
    "ScopedStore",
    "Silence",
    "StaleEpochError",
    "Store",
    "StoreError",
    "TicketRecord",
    "TicketState",
    "TicketWriteKind",
    "Transaction",
    "database_errors",
    "silence_matches",
]
