"""The garbage collector's policy for a long-running daemon (``benchmarks/bench_pipeline.py`` measures it).

The model and the engine's start-up state live as long as the process: frozen, the collector never walks them
again. A storm's cycle allocates millions of short-lived objects, and with the default young generation (700
objects) the collector runs thousands of times a cycle; a young generation of 50,000 collects the same garbage in
fewer, larger passes. The larger young generation applies from the process's start (``widen_young_generation``):
start-up builds millions of objects that all live on (the plan, UFM's topology read, the engine's indexes), and with
the default thresholds the collector walked all of them again and again for nothing, a full pass every few
hundred thousand objects (on h100-32k 15 full passes, 3.5 s of a 15 s start, collecting a few dozen objects).

What Python frees, glibc's allocator keeps in its heap for the next allocation, and a cycle's largest transient
(UFM's whole event list as bytes and text, which grows with UFM's history) raises that heap for good: after a
cycle the daemon gives what is free at the heap's top back to the system (``malloc_trim``; nothing where the C
library is not glibc).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable

GC_THRESHOLD = (50_000, 50, 100)


def widen_young_generation() -> None:
    """The young generation of ``GC_THRESHOLD``, set before start-up builds anything: no full pass until
    ``apply_gc_policy`` freezes what start-up built."""
    gc.set_threshold(*GC_THRESHOLD)


def apply_gc_policy() -> None:
    """Collect once, freeze what survives (the long-lived state), then widen the young generation."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim  # type: ignore[no-any-return]


_TRIM = _malloc_trim()


def release_freed_memory() -> None:
    """Give the allocator's free memory back to the system (glibc's ``malloc_trim(0)``)."""
    if _TRIM is not None:
        _TRIM(0)
