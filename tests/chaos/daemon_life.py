"""One life of the real daemon (``fabricctl run --clock simulator``) as the daemon chaos run sees it: started,
watched over its HTTP API, killed by a request observer of the simulator at a planned moment, or found dead.

Cycles are counted from its log (``cycle done`` and ``cycle failed`` lines, read as they are appended): parsing
``/metrics`` fifty times a second cost the harness more than the daemon's own cycles.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import httpx
from daemon_support import Daemon, command, daemon_env

T = TypeVar("T")
BOUND = 60.0
"""Real seconds one wait (start-up, a cycle) may take before the run gives up: generous, the machine is shared."""
POLL = 0.02
CYCLE_LINES = (b'"message": "cycle done in ', b'"message": "cycle failed ')


class LifeEnded(Exception):
    """The daemon exited while the harness waited on it (killed as planned, or by itself)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"the daemon exited with {code}")
        self.code = code


class HarnessError(RuntimeError):
    """The run cannot go on: the daemon hung, exited by itself, or the simulator refused a step."""


class Life(Daemon):
    """A running daemon: ``Daemon`` (its API, metrics, log) with the waits a run needs."""

    def __init__(self, config: Path, port: int, log: Path, env: dict[str, str], number: int) -> None:
        with log.open("wb") as sink:
            process = subprocess.Popen(command(config), stdout=subprocess.DEVNULL, stderr=sink,
                                       env=daemon_env(**env))
        super().__init__(process, f"http://127.0.0.1:{port}", log)
        self.number = number
        self.http = httpx.Client(base_url=f"{self.api}/api/v1", timeout=10)
        self._read = 0
        self._cycles = 0

    def cycles_finished(self) -> int:
        """Cycles this life finished (done or failed), from the lines its log gained since the last call."""
        with self.log.open("rb") as handle:
            handle.seek(self._read)
            text = handle.read()
        whole = text.rfind(b"\n") + 1  # a line still being written is read next time
        self._read += whole
        self._cycles += sum(text[:whole].count(line) for line in CYCLE_LINES)
        return self._cycles

    def get(self, path: str) -> httpx.Response:
        return self.http.get(path)

    def until(self, what: str, check: Callable[[], bool]) -> None:
        """Wait for ``check``; ``LifeEnded`` if the process exits meanwhile, ``HarnessError`` past ``BOUND``."""
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise LifeEnded(code)
            try:
                if check():
                    return
            except httpx.HTTPError:
                pass  # not listening yet, or dying
            time.sleep(POLL)
        self.process.kill()
        raise HarnessError(f"life {self.number}: no {what} within {BOUND:.0f} s:\n{self.log.read_text()[-3000:]}")

    def ask(self, what: str, read: Callable[[Life], T]) -> T:
        """``read(self)`` once it answers (a life starting may not listen yet)."""
        answer: list[T] = []

        def done() -> bool:
            answer.append(read(self))
            return True

        self.until(what, done)
        return answer[0]

    def wait_cycles(self, count: int) -> None:
        """Wait for ``count`` more cycles: at least ``count - 1`` of them started after this call."""
        target = self.cycles_finished() + count
        self.until(f"{count} more cycles", lambda: self.cycles_finished() >= target)

    def kill(self, how: signal.Signals) -> None:
        """Send ``how`` (from a simulator observer's thread); a SIGKILL is waited for, so that the request the
        observer holds is answered to no one."""
        os.kill(self.process.pid, how)
        if how is signal.SIGKILL:
            deadline = time.monotonic() + BOUND
            while self.process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.001)

    def close(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(BOUND)
