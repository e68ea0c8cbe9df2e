"""Who acts for the fabric: one leader, any number of standbys (PostgreSQL); a single instance (SQLite).

PostgreSQL: the leader holds a session-level advisory lock keyed by the fabric (``lock.advisory_key``) on a
connection of its own (autocommit: no transaction stays open), and each acquisition takes a new epoch, the fencing
token every write of its engine is checked against in the transaction that records it (``Store.fenced``). Every
``[leader] heartbeat`` the leader proves, on that connection, that its session still holds the lock and its epoch
is still the fabric's (and stamps the row with the database's clock); a standby tries the lock as often.

The timing (``docs/design.md``, "Active/standby"): the leader acts only while its last successful heartbeat, timed
before it was sent, is less than ``lease - heartbeat`` old (``leading``); any failed heartbeat deposes it at once.
A standby that takes the lock takes a new epoch at once (the old epoch's writes are refused from then on), then
waits until ``lease`` has passed since the old leader's last heartbeat on the database's clock (``take_epoch``'s
``wait``) before its engine starts. The old leader's last heartbeat was sent before the lock was free, so it had
stopped acting ``heartbeat`` before the new one starts, however PostgreSQL ended its session (a crash, a
``pg_terminate_backend``, keepalives giving up on a partition). A leader that hangs keeps its session, so a
standby that finds the lock held and the leader's heartbeat older than the lease ends that leader's sessions
(``sessions.end_hung_leader``) and takes the lock; woken, the old leader's lease has run out on its own clock and
its heartbeat fails on the ended session. A deposed leader drops its engine (everything it held in memory) and
stands by again on a new session.

SQLite: the ``flock`` of ``lock.hold`` keeps one instance for the process's life; it takes an epoch at start and
never loses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from fabric.api.context import LeaderView, Role
from fabric.config import LeaderSection
from fabric.daemon.lock import ADVISORY_LOCK, advisory_key, describe_holder
from fabric.daemon.sessions import TakeoverRefused, end_hung_leader, leadership_session
from fabric.store import Fence, Store
from fabric.store._leadership import beat

log = logging.getLogger(__name__)

T = TypeVar("T")

_HELD = sa.text(f"SELECT count(*) FROM pg_locks l WHERE {ADVISORY_LOCK} AND l.pid = pg_backend_pid()")
"""Whether this session holds the fabric's lock (a connection silently replaced would not)."""


def instance_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Leadership:
    """One instance's part in the fabric's leadership (``for_store`` picks the kind the database allows)."""

    def __init__(self, store: Store, settings: LeaderSection, instance: str) -> None:
        self.store, self.instance = store, instance
        self.lease = settings.lease.total_seconds()
        self.heartbeat = settings.heartbeat.total_seconds()
        self.epoch: int | None = None
        self._lost: str | None = None
        self._blocked: str | None = None
        """Why this standby cannot end a hung leader's sessions (``None``: nothing keeps it from taking over)."""
        self._last_beat = 0.0
        self._seen = store.leader()
        self.tried = False
        """Whether this instance has tried the leadership yet: until then its role is none that anyone may rely on
        (a single instance is no standby; a standby's readiness means it found another leading)."""

    @staticmethod
    def for_store(store: Store, settings: LeaderSection, instance: str) -> Leadership:
        if store.backend == "postgresql":
            return AdvisoryLeadership(store, settings, instance)
        return Leadership(store, settings, instance)

    def status(self) -> LeaderView:
        if self.epoch is not None and self.leading():
            return LeaderView(Role.LEADER, self.instance, self.epoch, self.instance)
        seen = self._seen
        return LeaderView(Role.STANDBY, self.instance, seen.epoch if seen else None, seen.holder if seen else None,
                          self._blocked)

    def leading(self) -> bool:
        """This instance may act: it holds an epoch and its lease runs (thread-safe: read by the engine's store)."""
        return self.epoch is not None and self._lost is None and self._lease_runs()

    def _lease_runs(self) -> bool:
        return True  # a single instance's lock lasts as long as the process

    def fence(self) -> Fence:
        assert self.epoch is not None
        return Fence(self.store.fabric, self.epoch, self.leading)

    async def acquire(self, stopping: asyncio.Event) -> bool:
        """Lead: the lock taken, a new epoch, the previous holder's lease waited out. False: ``stopping`` first."""
        self._last_beat = time.monotonic()
        taken = await asyncio.to_thread(self.store.take_epoch, self.instance, lease=self.lease)
        self.epoch = taken.epoch
        self.tried = True
        return True

    async def watch(self) -> str:
        """Returns why, once this instance no longer leads (a single instance never stops leading)."""
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    def let_go(self) -> None:
        """Stopped acting for good (a clean shutdown): the next leader need not wait out this one's lease."""
        if self.epoch is not None and self._lost is None:
            self.store.let_go(self.epoch)

    def stand_by(self) -> None:
        """After losing the leadership: a candidate again, with no epoch (a single instance never loses it)."""
        self.epoch, self._lost = None, None

    def close(self) -> None:
        """Nothing to release: the ``flock`` is ``lock.hold``'s."""


class AdvisoryLeadership(Leadership):
    """PostgreSQL: the advisory lock on a connection of its own, a heartbeat, standbys that wait their turn."""

    def __init__(self, store: Store, settings: LeaderSection, instance: str) -> None:
        super().__init__(store, settings, instance)
        self._key = advisory_key(store.fabric)
        self._connection = self._open()
        self._watching: asyncio.Task[str] | None = None
        self._renew = False

    def _open(self) -> Connection:
        connection = self.store.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        # A heartbeat the server cannot answer in time fails there too, not only here.
        connection.exec_driver_sql(f"SET statement_timeout = {int(self.heartbeat * 1000)}")
        # Who is who in pg_stat_activity (PostgreSQL keeps 63 bytes of it).
        connection.execute(sa.select(sa.func.set_config("application_name", leadership_session(
            self.store.fabric, self.instance), False)))
        return connection

    def _lease_runs(self) -> bool:
        return time.monotonic() - self._last_beat < self.lease - self.heartbeat

    async def acquire(self, stopping: asyncio.Event) -> bool:
        told = False
        if self._renew:
            # Deposed: a lease's wait first, so that a standby that kept its session takes over rather than the
            # instance whose session just failed.
            self._renew = False
            await self._renewed()
            with contextlib.suppress(Exception):
                self._seen = await self._bounded(self.store.leader)
            await self._sleep(self.lease, stopping)
        while not stopping.is_set():
            started = time.monotonic()
            try:
                locked = await self._bounded(self._try_lock)
                self.tried = True
                if not locked:
                    if not told:
                        holder = await self._bounded(lambda: describe_holder(self._connection, self._key))
                        log.info("fabric %s: standby (%s): %s leads; trying every %gs", self.store.fabric,
                                 self.instance, holder, self.heartbeat)
                        told = True
                    self._seen = await self._bounded(self.store.leader)
                    if await self._bounded(self._end_hung_leader):
                        continue  # its lock is free: tried again at once
            except Exception as exc:  # the database out of reach: a standby goes on trying, on a new session
                self.tried = True
                log.warning("fabric %s: standby (%s): cannot try the leadership lock: %s", self.store.fabric,
                            self.instance, _first_line(exc))
                await self._renewed()
                await self._sleep(self.heartbeat, stopping)
                continue
            if locked:
                self._last_beat, self._blocked = started, None
                # On the pool, unbounded by the heartbeat: it waits for the old leader's fenced transactions.
                taken = await asyncio.wait_for(asyncio.to_thread(self.store.take_epoch, self.instance,
                                                                 lease=self.lease), self.lease)
                self.epoch = taken.epoch
                self._watching = asyncio.ensure_future(self._heartbeats())
                log.info("fabric %s: this instance (%s) leads, epoch %d%s", self.store.fabric, self.instance,
                         taken.epoch, f"; waiting {taken.wait:.1f}s for the previous leader's lease to run out"
                         if taken.wait else "")
                return await self._sleep(taken.wait, stopping)
            await self._sleep(self.heartbeat, stopping)
        return False

    async def _renewed(self) -> None:
        """``_reopen``, given at most a lease (a database out of reach may take TCP's time to refuse)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.to_thread(self._reopen), self.lease)

    def _reopen(self) -> None:
        """The session replaced (an invalidated connection takes no statement until rolled back). The old one is
        closed aside: a statement stuck on it (a partition) must not hold the new one up; its lock, if it still has
        it, goes with it."""
        old = self._connection
        with contextlib.suppress(Exception):
            self._connection = self._open()
        threading.Thread(target=_close_quietly, args=(old,), name="leadership-close", daemon=True).start()

    def _end_hung_leader(self) -> bool:
        """Whether a leader that holds the lock past its lease had its sessions ended (``sessions``)."""
        try:
            hung = end_hung_leader(self._connection, self.store.fabric, self._key, self.lease, self.heartbeat / 2)
        except TakeoverRefused as exc:
            if self._blocked is None:  # once while it lasts: every heartbeat would bury the rest of the log
                log.error("fabric %s: standby (%s) cannot take over: %s", self.store.fabric, self.instance, exc)
            self._blocked = str(exc)
            return False
        self._blocked = None
        if hung is not None:
            log.warning("fabric %s: standby (%s): the leader %s holds the lock without a heartbeat for %.1fs, past "
                        "the %gs lease: its database sessions ended (backend pids %s), to take over",
                        self.store.fabric, self.instance, hung.holder, hung.silent, self.lease,
                        ", ".join(map(str, hung.pids)))
        return hung is not None

    def _try_lock(self) -> bool:
        return bool(self._connection.execute(sa.select(sa.func.pg_try_advisory_lock(self._key))).scalar())

    async def _heartbeats(self) -> str:
        while True:
            await asyncio.sleep(self.heartbeat)
            started = time.monotonic()
            try:
                alive = await self._bounded(self._beat)
            except Exception as exc:  # any failure: the session, hence the lock, may be gone
                self._lost = f"its heartbeat failed ({_first_line(exc)})"
                return self._lost
            if not alive:
                self._lost = "its heartbeat found the lock or the epoch no longer its own"
                return self._lost
            # Even after a stall longer than the lease (``leading`` was False meanwhile): the lock was never lost.
            self._last_beat = started

    def _beat(self) -> bool:
        assert self.epoch is not None
        return bool(self._connection.scalar(_HELD, {"key": self._key})) and beat(self._connection,
                                                                                 self.store.fabric, self.epoch)

    async def watch(self) -> str:
        assert self._watching is not None
        return await self._watching

    async def _bounded(self, work: Callable[[], T]) -> T:
        """``work`` on the database, in a thread, given at most one heartbeat (a partition would hold it until TCP
        gives up)."""
        return await asyncio.wait_for(asyncio.to_thread(work), self.heartbeat)

    @staticmethod
    async def _sleep(seconds: float, stopping: asyncio.Event) -> bool:
        """False: ``stopping`` came first."""
        try:
            await asyncio.wait_for(stopping.wait(), seconds)
        except TimeoutError:
            return True
        return False

    def stand_by(self) -> None:
        """The next ``acquire`` tries on a new session (the old one, and its lock if it still has it, let go)."""
        if self._watching is not None:
            self._watching.cancel()
            self._watching = None
        self._renew = True
        super().stand_by()

    def close(self) -> None:
        """The session ends: PostgreSQL releases the lock."""
        if self._watching is not None:
            self._watching.cancel()
        _close_quietly(self._connection)


def _close_quietly(connection: Connection) -> None:
    """The session ended for good: never back to the pool, where its statement timeout and name would stay."""
    with contextlib.suppress(Exception):
        connection.invalidate()
        connection.close()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
