"""The engine's process, started and watched by the daemon's API process: started again when it exits unasked.

``fabricctl run`` is one command and one systemd unit, and two processes: the API's (this one: uvicorn, the store's
reads, webhook receipt) and the engine's (``fabric.daemon.engine_process``: leadership, the scheduler, the cycles,
every UFM and ticket write). The engine's process is this one's child: it ends with it (``PR_SET_PDEATHSIG``), and
this one forwards SIGTERM, SIGHUP and wake-ups (SIGUSR1) to it.

An engine process that exits unasked (a crash, SIGKILL, the kernel's OOM killer) is started again after a back-off
that doubles from ``FIRST_BACKOFF`` to ``MAX_BACKOFF`` and starts over once one ran ``STABLE_AFTER``; meanwhile the
API answers reads from the store and ``/readyz`` says the engine is not running. Exit code 2 is a refusal to start
(UFM refused the credentials, the configuration does not load: the engine process said why in one line): starting
it again would be refused again, so the daemon stops with the same code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from fabric.api.context import EngineProcess, EngineState

log = logging.getLogger(__name__)

REFUSED = 2
"""The engine process's exit code for a refusal to start (``fabricctl``'s for every ``FabricError``)."""
FIRST_BACKOFF, MAX_BACKOFF, STABLE_AFTER = 1.0, 30.0, 60.0
STOP_GRACE = 5.0
"""Seconds past ``[daemon] shutdown_wait`` an engine process may take to exit after SIGTERM before it is killed."""


def how_it_ended(code: int) -> str:
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


class EngineSupervisor:
    def __init__(self, command: Sequence[str], *, shutdown_wait: float, now: Callable[[], datetime]) -> None:
        self._command = list(command)
        self._shutdown_wait = shutdown_wait
        self._now = now
        self._process: asyncio.subprocess.Process | None = None
        self._view = EngineProcess(EngineState.STARTING, None, now())

    def view(self) -> EngineProcess:
        return self._view

    def signal(self, sig: signal.Signals) -> bool:
        """Send ``sig`` to the running engine process (False: none runs). Safe from any thread."""
        process = self._process
        if process is None or process.returncode is not None:
            return False
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
            return True
        return False

    async def run(self, stop: asyncio.Event) -> int | None:
        """Run the engine process, again each time it exits unasked, until ``stop`` is set (then it is stopped: the
        running job may finish within ``shutdown_wait``). ``REFUSED`` when it refused to start (``None``: stopped)."""
        backoff = FIRST_BACKOFF
        while not stop.is_set():
            started = time.monotonic()
            self._process = process = await asyncio.create_subprocess_exec(*self._command,
                                                                           stdin=asyncio.subprocess.DEVNULL)
            self._view = replace(self._view, state=EngineState.STARTING, pid=process.pid, since=self._now())
            log.debug("engine process %d started", process.pid)
            code = await self._until_exit_or(stop, process)
            if code is None:
                await self._stop(process)
                return None
            ended = how_it_ended(code)
            if code == REFUSED:  # it said why, in the one line of a refusal: nothing to add to it
                return REFUSED
            lived = time.monotonic() - started
            backoff = FIRST_BACKOFF if lived >= STABLE_AFTER else backoff
            log.error("the engine process %d exited unasked (%s) after %.0f s: starting it again in %.0f s",
                      process.pid, ended, lived, backoff)
            self._view = replace(self._view, state=EngineState.RESTARTING, since=self._now(),
                                 restarts=self._view.restarts + 1, last_exit=ended)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), backoff)
            backoff = min(MAX_BACKOFF, backoff * 2)
        return None

    @staticmethod
    async def _until_exit_or(stop: asyncio.Event, process: asyncio.subprocess.Process) -> int | None:
        """The process's exit code, or ``None`` once ``stop`` is set first."""
        exited = asyncio.ensure_future(process.wait())
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait({exited, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if exited.done():
            return exited.result()
        exited.cancel()
        return None

    async def _stop(self, process: asyncio.subprocess.Process) -> None:
        self._view = replace(self._view, state=EngineState.STOPPING, since=self._now())
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(process.wait(), self._shutdown_wait + STOP_GRACE)
        except TimeoutError:
            log.error("the engine process %d did not exit within %.0f s of SIGTERM: killed", process.pid,
                      self._shutdown_wait + STOP_GRACE)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            code = await process.wait()
        self._view = replace(self._view, last_exit=how_it_ended(code))
