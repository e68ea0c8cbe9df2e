"""Events put in time order in bounded memory: an external merge sort.

An event.log that is not in time order (rotated files joined in the wrong order, two UFMs' logs concatenated)
cannot be replayed as it is read, and holding all of its events to sort them costs ~1.3 KiB an event: a month's
log would need gigabytes. Instead, the events are sorted in runs of ``RUN_EVENTS`` (about 65 MiB of events); each
full run is pickled to an unnamed temporary file (gone when closed, or when the process dies) in blocks of
``BLOCK_EVENTS``, and the runs are merged as they are read back, holding one block of each. A log of fewer
events than a run is sorted in memory and nothing is written.

The sort is stable, as ``sorted`` is: events with the same timestamp keep the order they came in (the runs are
consecutive stretches of the input, and ``heapq.merge`` takes equal keys from the earlier run first).
Pickling gives back the very events that went in (the same class, fields and values), since every event the
replay reads is a ``fabric.ufm.models.Event``.
"""

from __future__ import annotations

import heapq
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, TypeVar

__all__ = ["BLOCK_EVENTS", "RUN_EVENTS", "in_time_order"]

T = TypeVar("T")

RUN_EVENTS = 50_000
"""Events sorted in memory at once: the sort's peak, beside one block of each run while merging."""
BLOCK_EVENTS = 1_000
"""Events pickled together: one ``pickle`` call each way per block, and what a run holds in memory while merging."""


def in_time_order(events: Iterable[T], key: Callable[[T], Any], *, run_events: int | None = None,
                  block_events: int | None = None) -> Iterator[T]:
    """``events`` sorted by ``key``, stably, holding at most ``run_events`` of them (and a block of each run
    spilled) at once; ``RUN_EVENTS`` and ``BLOCK_EVENTS`` as they are when called, by default. The temporary
    files are closed when the iteration ends or the iterator is closed."""
    run_events = RUN_EVENTS if run_events is None else run_events
    block_events = BLOCK_EVENTS if block_events is None else block_events
    if run_events < 1 or block_events < 1:
        raise ValueError("a run and a block hold at least one event")
    spilled: list[IO[bytes]] = []
    try:
        run: list[T] = []
        for event in events:
            run.append(event)
            if len(run) >= run_events:
                run.sort(key=key)
                spilled.append(_spill(run, block_events))
                run = []
        run.sort(key=key)
        if not spilled:
            yield from run
            return
        yield from heapq.merge(*(_read_back(handle) for handle in spilled), run, key=key)
    finally:
        for handle in spilled:
            handle.close()


def _spill(run: list[T], block_events: int) -> IO[bytes]:
    handle = tempfile.TemporaryFile(prefix="fabric-replay-sort-")  # noqa: SIM115 - returned open, for the merge
    try:
        for start in range(0, len(run), block_events):
            # A pickler per block: one kept for the file would remember (and so hold) every event it wrote.
            pickle.dump(run[start:start + block_events], handle, protocol=pickle.HIGHEST_PROTOCOL)
        handle.seek(0)
    except BaseException:
        handle.close()
        raise
    return handle


def _read_back(handle: IO[bytes]) -> Iterator[Any]:
    """The events of one spilled run, in order, a block at a time (the file is ours: nothing else writes it)."""
    while True:
        try:
            block = pickle.load(handle)  # a file this process wrote a moment ago: trusted
        except EOFError:
            return
        yield from block
