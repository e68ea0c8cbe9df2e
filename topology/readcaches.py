"""The caches the readers keep of names, labels, GUIDs and rates, and one call that empties them all.

A reader meets the same few texts again and again (a fabric's port labels, its GUIDs across links, its speeds), so
it caches what it made of each. The entries are made while a plan or UFM's lists are read, among the objects that
reading makes and drops, and their keys are often the decoded texts themselves: a process that keeps only what it
derived from a reading (the daemon's API its plan's index, the engine its reading made again from plain values)
empties them, else each entry holds an arena of the dropped reading's memory from the system (on h100-32k, 47 of
the plan model's 69 MiB).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol, TypeVar

__all__ = ["forget_read_names", "read_cache"]


class _Cached(Protocol):
    def cache_clear(self) -> None: ...


_CACHES: list[_Cached] = []
_Function = TypeVar("_Function", bound=Callable[..., Any])


def read_cache(maxsize: int) -> Callable[[_Function], _Function]:
    """``functools.lru_cache(maxsize)``, registered so that ``forget_read_names`` empties it."""
    def cached(function: _Function) -> _Function:
        wrapped = lru_cache(maxsize=maxsize)(function)
        _CACHES.append(wrapped)
        return wrapped  # type: ignore[return-value]  # lru_cache's wrapper calls as the function does
    return cached


def forget_read_names() -> None:
    """Empty every reader's cache (``read_cache``)."""
    for cache in _CACHES:
        cache.cache_clear()
