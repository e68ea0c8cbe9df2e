"""The engine process as the API process sees it: the API's ``Runtime`` across the process boundary.

Nothing is shared in memory: the status is the engine process's last status record (``status_record``) joined
with what the supervisor knows of the process; a wake-up is SIGUSR1; a reload is a request row in the store and
SIGHUP, answered in the row (``reload_requests``). No call waits on the engine's cycle: a status is a file read,
and a reload waits only for the engine process to take the request between two jobs, at most ``RELOAD_WAIT``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from dataclasses import replace
from datetime import datetime

from fabric.api.context import EngineProcess, EngineState, NotApplied, Reload, RuntimeStatus
from fabric.daemon.reload_requests import reload_of
from fabric.daemon.status_record import RecordReader, StatusRecord
from fabric.daemon.supervisor import EngineSupervisor
from fabric.store import RequestKind, Store

RELOAD_WAIT = 30.0
"""Seconds a reload request waits for the engine process's answer (it may be finishing a storm's cycle)."""
RELOAD_POLL = 0.05


class EngineLink:
    def __init__(self, supervisor: EngineSupervisor, reader: RecordReader, store: Store, instance: str,
                 before: RuntimeStatus) -> None:
        """``before``: the status to show until the engine process reports (``starting``)."""
        self._supervisor, self._reader, self._store = supervisor, reader, store
        self.instance = instance
        self._before = replace(before, starting=True)

    def _current(self) -> tuple[EngineProcess, StatusRecord | None]:
        """The process, and its status record (``None``: it has not written one)."""
        process = self._supervisor.view()
        record = self._reader.read()
        if record is None or record.pid != process.pid:
            return process, None
        if process.state is EngineState.STARTING:
            process = replace(process, state=EngineState.RUNNING)
        return replace(process, silent_for=round(max(0.0, time.monotonic() - record.written), 3)), record

    def engine_clock(self, otherwise: datetime) -> datetime:
        """The engine's clock as it last reported it (``otherwise`` until it has)."""
        record = self._reader.read()
        return otherwise if record is None else record.clock

    def process(self) -> EngineProcess:
        return self._current()[0]

    def status(self) -> RuntimeStatus:
        process, record = self._current()
        return replace(record.status if record is not None else self._before, engine=process)

    def engine_metrics(self) -> str:
        """The running engine process's metrics as it last wrote them ('': none runs, or it has not reported)."""
        _, record = self._current()
        return "" if record is None else record.metrics

    def wake(self) -> None:
        self._supervisor.signal(signal.SIGUSR1)

    async def reload(self, by: str, reason: str) -> Reload:
        process, record = self._current()
        if record is None:
            return Reload(f"reload: the engine process is {process.state.value} and does not report yet: not "
                          "applied, ask again", not_applied=NotApplied.BUSY)
        request = await asyncio.to_thread(self._store.request, RequestKind.RELOAD, reason=reason, requested_by=by,
                                          instance=self.instance)
        self._supervisor.signal(signal.SIGHUP)
        deadline = time.monotonic() + RELOAD_WAIT
        while time.monotonic() < deadline:
            await asyncio.sleep(RELOAD_POLL)
            answered = await asyncio.to_thread(self._store.get_request, request.id)
            if answered is not None and answered.outcome is not None:
                return reload_of(answered.outcome)
        return Reload(f"reload: the engine process did not take request {request.id} within {RELOAD_WAIT:.0f} s; "
                      "it applies it when it does", not_applied=NotApplied.BUSY)


class EngineClock:
    """The API process's clock under ``--clock simulator``: the engine's, as it last reported it (from ``start``
    until it has), as the engine's clock was the API's when both ran in one process."""

    def __init__(self, start: datetime) -> None:
        self._start = start
        self.link: EngineLink | None = None

    def now(self) -> datetime:
        return self._start if self.link is None else self.link.engine_clock(self._start)
