"""A daemon's PostgreSQL sessions: the names ``pg_stat_activity`` shows them by, and ending a hung leader's.

Every session of a daemon is named after its fabric and its instance (``host:pid``): the leadership session
(``leadership_session``, which holds the advisory lock) and the store's pooled ones (``store_session``, where its
fenced transactions run). A leader that hangs (SIGSTOP, a paused VM) keeps them all: PostgreSQL sees an idle client,
its lock stays held and no standby could ever take it. So a standby that finds the lock held and the leadership
row's heartbeat older than the lease, on the database's clock, ends that leader's sessions (``end_hung_leader``):
the lock is freed, and a transaction it froze in (holding the epoch's row ``FOR KEY SHARE``, or a component's row)
is rolled back, so the new epoch is taken at once. Only the sessions of the instance that took the row's epoch,
and only while it holds the lock: an instance that took the lock but not yet its epoch is not the row's holder,
and a live leader's heartbeat is never older than the lease.

Ending another role's session takes membership in ``pg_signal_backend`` (or being that role), and a superuser's
takes a superuser: PostgreSQL refuses otherwise, which is ``TakeoverRefused``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from fabric.daemon.lock import ADVISORY_LOCK
from fabric.store.schema import leadership

_NAME_BYTES = 63
"""What PostgreSQL keeps of an ``application_name`` (NAMEDATALEN - 1)."""
_INSUFFICIENT_PRIVILEGE = "42501"
_DATABASE_NOW = sa.func.extract("epoch", sa.func.clock_timestamp())
"""The database's clock, the one the heartbeats are stamped with (``fabric.store._leadership``)."""


def leadership_session(fabric: str, instance: str) -> str:
    """The ``application_name`` of an instance's leadership session, as PostgreSQL keeps it."""
    return _kept(f"fabric-remediation lead {instance} {fabric}")


def store_session(fabric: str, instance: str) -> str:
    """The ``application_name`` of a daemon's store sessions, as PostgreSQL keeps it."""
    return _kept(f"fabric-remediation store {instance} {fabric}")


def _kept(name: str) -> str:
    """``name`` as PostgreSQL would keep it, made so that it keeps it unchanged: printable ASCII (PostgreSQL
    replaces anything else), 63 bytes at most (the instance first, so that a long fabric name is what is cut: the
    lock's key tells fabrics apart, nothing but the name tells instances apart)."""
    return "".join(c if " " <= c <= "~" else "?" for c in name)[:_NAME_BYTES]


@dataclass(frozen=True, slots=True)
class HungLeader:
    holder: str
    """The instance whose sessions were ended."""
    silent: float
    """Seconds since its last heartbeat, on the database's clock."""
    pids: tuple[int, ...]
    """The backends ended (the leadership session and the store's)."""


class TakeoverRefused(Exception):
    """PostgreSQL refused to end a hung leader's sessions: this instance's role may not."""

    def __init__(self, holder: str, silent: float, reason: str) -> None:
        super().__init__(
            f"{holder} holds the leadership lock without a heartbeat for {silent:.1f}s, past the lease, and this "
            f"instance's database role may not end its sessions ({reason}): run both daemons as one role or grant "
            "this one pg_signal_backend (only a superuser may end a superuser's sessions); meanwhile restart that "
            "leader")


_HUNG = sa.text(
    "WITH hung AS MATERIALIZED (SELECT a.pid FROM pg_stat_activity a WHERE a.application_name IN (:lead, :store) "
    "AND EXISTS (SELECT 1 FROM leadership r WHERE r.fabric = :fabric AND r.holder = :holder "
    "AND r.heartbeat_at < extract(epoch FROM clock_timestamp()) - :lease) "
    f"AND EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity h ON h.pid = l.pid WHERE {ADVISORY_LOCK} "
    "AND h.application_name = :lead)) "
    "SELECT pid FROM hung WHERE pg_terminate_backend(pid, :wait)")
"""End the sessions of ``:holder`` if, as the statement runs, its heartbeat is older than the lease and its
leadership session holds the lock; each waited for up to ``:wait`` ms. Materialised, so that no session is ended
before every condition was checked (PostgreSQL may evaluate a ``WHERE``'s terms in any order)."""


def end_hung_leader(connection: Connection, fabric: str, key: int, lease: float, wait: float) -> HungLeader | None:
    """End the sessions of ``fabric``'s leader if it holds the lock ``key`` and has not beaten for ``lease``
    (``None``: it has, or the lock's holder is not the row's). ``wait``: seconds each session is given to end.
    ``TakeoverRefused``: PostgreSQL does not let this session's role end them."""
    row = connection.execute(sa.select(leadership.c.holder, (_DATABASE_NOW - leadership.c.heartbeat_at)
                                       .label("silent")).where(leadership.c.fabric == fabric)).first()
    if row is None or row.silent is None or row.silent <= lease:
        return None
    holder, silent = str(row.holder), float(row.silent)
    try:
        pids = connection.scalars(_HUNG, {"lead": leadership_session(fabric, holder),
                                          "store": store_session(fabric, holder), "fabric": fabric,
                                          "holder": holder, "lease": lease, "key": key,
                                          "wait": int(wait * 1000)}).all()
    except sa.exc.DBAPIError as exc:
        if getattr(exc.orig, "sqlstate", None) != _INSUFFICIENT_PRIVILEGE:
            raise
        raise TakeoverRefused(holder, silent, str(exc.orig).strip().splitlines()[0]) from None
    return HungLeader(holder, silent, tuple(int(pid) for pid in pids)) if pids else None
