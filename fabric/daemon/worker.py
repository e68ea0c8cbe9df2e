"""The engine's own event loop, in a thread of its own, so that nothing the engine does holds the engine process's
main loop: the leadership's heartbeat, the scheduler and the status record the API process reads.

The engine's cycle is mostly synchronous work between its awaits: the pipeline's detectors and policy (a storm of
100,000 events is about a second of Python), the store's SQLite writes, the guard. On the main loop, each of those
would delay the heartbeat (a leader whose heartbeat is late is deposed) and the status record (the API process
reports an engine that has not written one for 10 s as not ready). So the engine process runs two loops: the
scheduler's and the leadership's on the main thread's, and everything that touches the engine, the UFM client and
the simulator's clock on this one. The scheduler's jobs hand their work over with ``run`` and await it; cancelling
the awaiting task cancels the work (``run_coroutine_threadsafe`` carries the cancellation over). The GIL still lets
only one thread run Python at a time; a thread asking for it waits up to the switch interval each time while the
engine computes, so the interval is shortened (``SWITCH_INTERVAL``, set for the process when the engine's thread
starts). The API is in another process (``fabric.daemon.process``) and waits for none of this: when both ran in
one process, a ``/status`` answer took a median 15 ms during a storm's cycle at 0.5 ms, 578 ms at CPython's default
5 ms (``docs/benchmarks.md``).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Self, TypeVar

T = TypeVar("T")

SWITCH_INTERVAL = 0.0005
"""Seconds a thread runs before the GIL is offered to another that waits (CPython's default: 0.005)."""


class EngineLoop:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="engine", daemon=True)

    def __enter__(self) -> Self:
        sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """``work`` run on the engine's loop, awaited from the caller's."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    def close(self) -> None:
        """Let the loop's worker threads (``asyncio.to_thread``: the ticket backends) finish, stop the loop."""
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._loop.shutdown_default_executor(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
