"""The store's tables (SQLAlchemy Core, one ``MetaData``), as of the current schema version.

Everything the engine must not forget across a crash lives here: the desired state of every component, the
write-ahead log of side effects, the tickets, the event cursor, silences, webhook deliveries and the storm
breaker; plus the append-only history (findings, decisions) that explains every action.

Changing a table means adding a migration in ``fabric.store.migrations`` (and bumping nothing by hand: the
schema version is the number of the last migration).  The local ticket backend's tables live in
``tickets.local.LOCAL_METADATA`` and are created and migrated with these.
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
    "schema_version",
    "silences",
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
    sa.Column("id", sa.Text, primary_key=True),  # str(ComponentId)
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("lifecycle", sa.Text, nullable=False),
    sa.Column("strikes", sa.Integer, nullable=False),
    sa.Column("since", UTCDateTime, nullable=False),
    sa.Column("ticket_dedup_key", sa.Text, nullable=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("evidence", JSON_DOC, nullable=False),
    sa.Column("probation_until", UTCDateTime, nullable=True),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("rule", sa.Text, nullable=False, server_default=""),
    sa.Column("never_auto_restore", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index("ix_components_lifecycle", "lifecycle"),
)

findings = sa.Table(
    "findings",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("component", sa.Text, nullable=False),
    sa.Column("rule", sa.Text, nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("evidence", JSON_DOC, nullable=False),
    # added in version 2
    sa.Column("ticket_only", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("never_auto_restore", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index("ix_findings_component_at", "component", "at"),
    sa.Index("ix_findings_at", "at"),
    sqlite_autoincrement=True,
)

intents = sa.Table(
    "intents",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("epoch", sa.BigInteger, nullable=False),
    sa.Column("component", sa.Text, nullable=True),
    sa.Column("kind", sa.Text, nullable=False),  # ActionKind value
    sa.Column("payload", JSON_DOC, nullable=False),
    sa.Column("state", sa.Text, nullable=False),  # IntentState value
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("finished_at", UTCDateTime, nullable=True),
    sa.Column("outcome", sa.Text, nullable=True),
    sa.Index("ix_intents_state", "state"),
    sa.Index("ix_intents_epoch", "epoch"),
    sa.Index("ix_intents_component", "component"),
    sqlite_autoincrement=True,
)

decisions = sa.Table(
    "decisions",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),  # ActionKind value
    sa.Column("component", sa.Text, nullable=True),
    sa.Column("rule", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("guard", JSON_DOC, nullable=False),
    sa.Column("dry_run", sa.Boolean, nullable=False),
    sa.Index("ix_decisions_at", "at"),
    sa.Index("ix_decisions_component_at", "component", "at"),
    sqlite_autoincrement=True,
)

ACTIVE_TICKET_PREDICATE = sa.text("state IN ('creating', 'open')")
"""The rows of ``tickets`` of which at most one per dedup key may exist (``TicketState.CREATING``/``OPEN``)."""

tickets = sa.Table(
    "tickets",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("dedup_key", sa.Text, nullable=False),
    sa.Column("backend", sa.Text, nullable=False),
    sa.Column("external_key", sa.Text, nullable=True),
    sa.Column("state", sa.Text, nullable=False),  # TicketState value
    sa.Column("component", sa.Text, nullable=True),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("resolved_at", UTCDateTime, nullable=True),
    # UNIQUE(dedup_key) among the active tickets: resolved and closed rows stay as history, and a component that
    # breaks again after its ticket was resolved gets a new row.
    sa.Index(
        "uq_tickets_active_dedup_key",
        "dedup_key",
        unique=True,
        postgresql_where=ACTIVE_TICKET_PREDICATE,
        sqlite_where=ACTIVE_TICKET_PREDICATE,
    ),
    sa.Index("ix_tickets_dedup_key", "dedup_key"),
    sa.Index("ix_tickets_external", "backend", "external_key"),
    sa.Index("ix_tickets_state", "state"),
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
    sa.Column("matcher", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("created_by", sa.Text, nullable=False),
    sa.Column("starts_at", UTCDateTime, nullable=False),
    sa.Column("ends_at", UTCDateTime, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Index("ix_silences_ends_at", "ends_at"),
    sqlite_autoincrement=True,
)

webhook_deliveries = sa.Table(
    "webhook_deliveries",
    METADATA,
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
)
