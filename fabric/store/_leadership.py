"""Each fabric's leader epoch (a fencing token) and the check every fenced write makes against it.

A daemon that becomes leader takes a new epoch (``take_epoch``: the row's epoch plus one); from then on a writer
with any other epoch is refused, in the transaction it writes in (``check_epoch``), so a deposed leader that has
not noticed yet cannot record an intent, a decision or a ticket. The race between the check and the bump is closed
by row locks on PostgreSQL: every fenced transaction holds the row ``FOR KEY SHARE`` until it commits, and
``take_epoch`` locks it ``FOR UPDATE`` first, so it waits for every transaction that checked the old epoch, and
every transaction after it sees the new one. The heartbeat's update of ``heartbeat_at`` changes no key, so it
neither waits for the writers nor blocks them. SQLite's ``BEGIN IMMEDIATE`` serialises every writer already.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from fabric.store._base import OpsBase, dialect_insert
from fabric.store.records import StaleEpochError
from fabric.store.schema import intents, leadership


@dataclass(frozen=True, slots=True)
class TakenEpoch:
    epoch: int
    wait: float
    """Seconds until the previous holder's lease has run out for sure (0: it let go cleanly, or never beat)."""


@dataclass(frozen=True, slots=True)
class LeaderRecord:
    epoch: int
    holder: str


def database_seconds(conn: Connection) -> float:
    """The database's own clock, in seconds since the Unix epoch: the one clock every instance's heartbeats and
    waits are measured on."""
    if conn.dialect.name == "postgresql":
        return float(conn.scalar(sa.text("SELECT extract(epoch FROM clock_timestamp())")))
    return float(conn.scalar(sa.text("SELECT (julianday('now') - 2440587.5) * 86400.0")))


def current_epoch(conn: Connection, fabric: str, *, share: bool) -> int | None:
    """The fabric's leader epoch (``None``: no instance ever led it); ``share``: held ``FOR KEY SHARE`` until the
    transaction ends, so that no new epoch is taken meanwhile."""
    query = sa.select(leadership.c.epoch).where(leadership.c.fabric == fabric)
    if share and conn.dialect.name == "postgresql":
        query = query.with_for_update(read=True, key_share=True)
    found = conn.scalar(query)
    return None if found is None else int(found)


def check_epoch(conn: Connection, fabric: str, epoch: int) -> None:
    """``StaleEpochError`` unless ``epoch`` is the fabric's leader epoch, held for the rest of the transaction."""
    current = current_epoch(conn, fabric, share=True)
    if current != epoch:
        raise StaleEpochError(epoch, current)


def beat(conn: Connection, fabric: str, epoch: int) -> bool:
    """The holder of ``epoch`` is alive: its heartbeat, on the database's clock. False: the epoch is no longer the
    fabric's (another instance took a newer one)."""
    return _set_beat(conn, fabric, epoch, database_seconds(conn))


def _set_beat(conn: Connection, fabric: str, epoch: int, at: float | None) -> bool:
    done = conn.execute(sa.update(leadership).where(leadership.c.fabric == fabric, leadership.c.epoch == epoch)
                        .values(heartbeat_at=at))
    return done.rowcount == 1


class LeadershipOps(OpsBase):
    def take_epoch(self, holder: str, *, lease: float) -> TakenEpoch:
        """A new epoch for ``holder``, who holds the fabric's leadership lock: every writer of an older epoch is
        refused from now on. ``wait``: how long the previous holder may still believe it leads (its last heartbeat
        plus ``lease``, on the database's clock), during which the new one must not act."""
        with self._conn() as conn:
            query = sa.select(leadership.c.heartbeat_at).where(leadership.c.fabric == self.fabric)
            if conn.dialect.name == "postgresql":
                query = query.with_for_update()  # waits for every transaction that checked the old epoch
            beat = conn.scalar(query)
            now = database_seconds(conn)
            # The first epoch follows any an intent already carries (a database from before version 7).
            logged = conn.scalar(sa.select(sa.func.max(intents.c.epoch)).where(intents.c.fabric == self.fabric))
            first = 1 + int(logged or 0)
            insert = dialect_insert(conn, leadership).values(fabric=self.fabric, epoch=first, holder=holder,
                                                             acquired_at=self._now(), heartbeat_at=now)
            stmt = insert.on_conflict_do_update(
                index_elements=[leadership.c.fabric],
                set_={"epoch": leadership.c.epoch + 1, "holder": holder, "acquired_at": self._now(),
                      "heartbeat_at": now},
            ).returning(leadership.c.epoch)
            epoch = int(conn.execute(stmt).scalar_one())
        return TakenEpoch(epoch, 0.0 if beat is None else max(0.0, float(beat) + lease - now))

    def let_go(self, epoch: int) -> None:
        """The holder of ``epoch`` stopped acting (a clean shutdown): the next one need not wait for its lease."""
        with self._conn() as conn:
            _set_beat(conn, self.fabric, epoch, None)

    def leader(self) -> LeaderRecord | None:
        """Who leads the fabric, or last did (``None``: no instance ever led it)."""
        with self._read() as conn:
            row = conn.execute(sa.select(leadership.c.epoch, leadership.c.holder)
                               .where(leadership.c.fabric == self.fabric)).first()
        return None if row is None else LeaderRecord(int(row.epoch), str(row.holder))
