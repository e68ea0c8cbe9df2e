"""The store's tables (SQLAlchemy Core, one ``MetaData``), as of the current schema version.

Everything the engine must not forget across a crash lives here: the desired state of every component, the
write-ahead log of side effects, the tickets, the event cursor, silences, webhook deliveries and the storm
breaker; plus the append-only history (findings, decisions) that explains every action.

Every row belongs to one fabric (the ``fabric`` column, part of every key): one database can serve several
fabrics, each daemon seeing and touching only its own rows.

Changing a table means adding a migration in ``fabric.store.migrations`` (and bumping nothing by hand: the
schema version is the number of the last migration).  The store owns these tables only: the local ticket
backend creates its own (``tickets.local``).
"""

from __future__ import annotations

import sqlalchemy as sa

from fabric.store.types import ID, JSON_DOC, UTCDateTime

__all__ = [
    "ACTIVE_TICKET_PREDICATE",
    "METADATA",
    "breaker",
    "components",
    "decisions",
    "event_cursor",
    "findings",
    "intents",
    "leadership",
    "operator_requests",
    "schema_version",
    "silences",
    "storm_window",
    "tickets",
    "webhook_deliveries",
]

METADATA = sa.MetaData()

schema_version = sa.Table(
    "schema_version",
    METADATA,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at", UTCDateTime, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
)
"""One row per version applied; the database's version is the largest."""

components = sa.Table(
    "components",
    METADATA,
    sa.Column("fabric", sa.Text, primary_key=True),
    sa.Column("id", sa.Text, primary_key=True),  # str(ComponentId)
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("lifecycle", sa.Text, nullable=False),
    sa.Column("strikes", sa.Integer, nullable=False),
    sa.Column("since", UTCDateTime, nullable=False),
    sa.Column("ticket_dedup_key", sa.Text, nullable=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("probation_until", UTCDateTime, nullable=True),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("rule", sa.Text, nullable=False),
    sa.Column("never_auto_restore", sa.Boolean, nullable=False),
    sa.Index("ix_components_fabric_lifecycle", "fabric", "lifecycle"),
)

findings = sa.Table(
    "findings",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("fabric", sa.Text, nullable=False),
    sa.Column("component", sa.Text, nullable=False),
    sa.Column("rule", sa.Text, nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("evidence", JSON_DOC, nullable=False),
    # added in version 2
    sa.Column("ticket_only", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("never_auto_restore", sa.Boolean, nullable=False, server_default=sa.false()),
    # added in version 11
    sa.Column("no_reset", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index("ix_findings_component_at", "component", "at"),
    sa.Index("ix_findings_fabric_at", "fabric", "at"),
    sqlite_autoincrement=True,
)

intents = sa.Table(
    "intents",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("fabric", sa.Text, nullable=False),
    sa.Column("epoch", sa.BigInteger, nullable=False),
    sa.Column("component", sa.Text, nullable=True),
    sa.Column("kind", sa.Text, nullable=False),  # ActionKind value
    sa.Column("payload", JSON_DOC, nullable=False),
    sa.Column("state", sa.Text, nullable=False),  # IntentState value
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("finished_at", UTCDateTime, nullable=True),
    sa.Column("outcome", sa.Text, nullable=True),
    sa.Index("ix_intents_fabric_state", "fabric", "state"),
    sa.Index("ix_intents_fabric_epoch", "fabric", "epoch"),
    sa.Index("ix_intents_component", "component"),
    sqlite_autoincrement=True,
)

decisions = sa.Table(
    "decisions",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("fabric", sa.Text, nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),  # ActionKind value
    sa.Column("component", sa.Text, nullable=True),
    sa.Column("rule", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("guard", JSON_DOC, nullable=False),
    sa.Column("dry_run", sa.Boolean, nullable=False),
    # added in version 7: the leader epoch that decided it (NULL: a writer outside leadership, or older)
    sa.Column("epoch", sa.BigInteger, nullable=True),
    sa.Index("ix_decisions_fabric_at", "fabric", "at"),
    sa.Index("ix_decisions_component_at", "component", "at"),
    sqlite_autoincrement=True,
)

ACTIVE_TICKET_PREDICATE = sa.text("state IN ('creating', 'open')")
"""The rows of ``tickets`` of which at most one per dedup key may exist (``TicketState.CREATING``/``OPEN``)."""

tickets = sa.Table(
    "tickets",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("fabric", sa.Text, nullable=False),
    sa.Column("dedup_key", sa.Text, nullable=False),
    sa.Column("backend", sa.Text, nullable=False),
    sa.Column("external_key", sa.Text, nullable=True),
    sa.Column("state", sa.Text, nullable=False),  # TicketState value
    sa.Column("component", sa.Text, nullable=True),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("resolved_at", UTCDateTime, nullable=True),
    # UNIQUE(fabric, dedup_key) among the active tickets: resolved and closed rows stay as history, and a component
    # that breaks again after its ticket was resolved gets a new row.
    sa.Index(
        "uq_tickets_active_dedup_key",
        "fabric",
        "dedup_key",
        unique=True,
        postgresql_where=ACTIVE_TICKET_PREDICATE,
        sqlite_where=ACTIVE_TICKET_PREDICATE,
    ),
    sa.Index("ix_tickets_dedup_key", "dedup_key"),
    sa.Index("ix_tickets_external", "backend", "external_key"),
    sa.Index("ix_tickets_fabric_state", "fabric", "state"),
    sqlite_autoincrement=True,
)

event_cursor = sa.Table(
    "event_cursor",
    METADATA,
    sa.Column("fabric", sa.Text, primary_key=True),
    sa.Column("high_water_id", sa.BigInteger, nullable=True),
    sa.Column("last_event_time", UTCDateTime, nullable=True),
    sa.Column("restart_count", sa.Integer, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

silences = sa.Table(
    "silences",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("fabric", sa.Text, nullable=False),
    sa.Column("matcher", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("created_by", sa.Text, nullable=False),
    sa.Column("starts_at", UTCDateTime, nullable=False),
    sa.Column("ends_at", UTCDateTime, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Index("ix_silences_fabric_ends_at", "fabric", "ends_at"),
    sqlite_autoincrement=True,
)

webhook_deliveries = sa.Table(
    "webhook_deliveries",
    METADATA,
    sa.Column("fabric", sa.Text, primary_key=True),
    sa.Column("id", sa.Text, primary_key=True),  # e.g. X-Atlassian-Webhook-Identifier
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("received_at", UTCDateTime, nullable=False),
    sa.Column("payload", JSON_DOC, nullable=True),
    sa.Column("processed_at", UTCDateTime, nullable=True),
    sa.Index("ix_webhook_deliveries_processed_at", "processed_at"),
    sa.Index("ix_webhook_deliveries_received_at", "received_at"),
)

breaker = sa.Table(
    "breaker",
    METADATA,
    sa.Column("fabric", sa.Text, primary_key=True),
    sa.Column("halted", sa.Boolean, nullable=False),
    sa.Column("since", UTCDateTime, nullable=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("storm_dedup_key", sa.Text, nullable=True),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    # added in version 5
    sa.Column("last_held", UTCDateTime, nullable=True),
    sa.Column("held_count", sa.Integer, nullable=False, server_default="0"),
)

storm_window = sa.Table(
    "storm_window",
    METADATA,
    sa.Column("fabric", sa.Text, primary_key=True),
    sa.Column("component", sa.Text, primary_key=True),
    sa.Column("first_at", UTCDateTime, nullable=False),
)
"""The components counted toward the storm breaker's window (added in version 5): a restart mid-storm keeps them."""

operator_requests = sa.Table(
    "operator_requests",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("fabric", sa.Text, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),  # RequestKind value
    sa.Column("component", sa.Text, nullable=True),  # str(ComponentId) for a clear; NULL for a resume
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("requested_by", sa.Text, nullable=False),
    sa.Column("requested_at", UTCDateTime, nullable=False),
    sa.Column("handled_at", UTCDateTime, nullable=True),
    sa.Column("outcome", sa.Text, nullable=True),
    sa.Column("instance", sa.Text, nullable=True),  # a reload's instance (host:pid); NULL: whichever leads
    sa.Index("ix_operator_requests_fabric_pending", "fabric", "handled_at"),
    sqlite_autoincrement=True,
)
"""What an operator asked automation to do (release a quarantine, resume after a storm): written by the command
line or the API, carried out by the engine at its next cycle, which records when and with what outcome."""

burnin_windows = sa.Table(
    "burnin_windows",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=False),  # the operator request's that asked for it
    sa.Column("fabric", sa.Text, nullable=False),
    sa.Column("duration_s", sa.Float, nullable=False),
    sa.Column("started_at", UTCDateTime, nullable=True),
    sa.Column("ends_at", UTCDateTime, nullable=True),
    sa.Column("ended_at", UTCDateTime, nullable=True),
    sa.Column("dry_run", sa.Boolean, nullable=True),
    sa.Column("report", JSON_DOC, nullable=True),
    sa.Index("ix_burnin_windows_fabric", "fabric", "id"),
)
"""Burn-in windows (added in version 10): asked for by an operator request of the same id, opened and judged by the
engine, which keeps the survivors report here."""

leadership = sa.Table(
    "leadership",
    METADATA,
    sa.Column("fabric", sa.Text, primary_key=True),
    sa.Column("epoch", sa.BigInteger, nullable=False),
    sa.Column("holder", sa.Text, nullable=False),
    sa.Column("acquired_at", UTCDateTime, nullable=False),
    sa.Column("heartbeat_at", sa.Float, nullable=True),
)
"""Who leads each fabric (added in version 7): the epoch (fencing token) of the newest leadership, taken anew at
each acquisition, and who holds it. ``heartbeat_at`` is the database's own clock (seconds since the Unix epoch) at
the holder's last heartbeat; ``NULL``: it let go cleanly, or it never beats (SQLite's single instance). A writer
whose epoch is not this row's is refused (``fabric.store._leadership``)."""
