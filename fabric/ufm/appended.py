"""UFM's event list decoded from where its last answer ended, when what came before is the same as then.

UFM answers ``GET /app/events`` with its whole history every time, and appends its new events at the end: after a
storm of 100,000 events every poll brings back 43 MB, of which the cursor keeps nothing, and decoding it cost the
daemon a third of a second at every cycle, for as long as UFM kept the storm. This module remembers, of the last
answer decoded, a digest of its bytes up to its closing ``]`` and what the cursor's filter
(``cursor.drop_handed_over``) could still want of it; when the next answer begins with the same bytes, only what
follows them is decoded.

The answer is read from the file it was spooled to as it arrived (``UfmHttp.get_spooled``), never held whole: with
UFM's history at hundreds of thousands of events (100 MB and more), holding the body, and the pieces it arrived in,
set the daemon's memory high water at every cycle for as long as the history lasted. The digest is taken a block at
a time, only the appended bytes are read into memory, and an answer decoded whole is decoded from the file a piece
at a time (``topology.jsonlist.file_items``).

What the filter wants of an answer it has seen whole, once the cursor has advanced past it: the elements holding the
answer's highest id (``drop_handed_over`` keeps those at or above the mark, and the mark is that id), and nothing
else (every other element is below the mark and no newer than the newest seen). So an answer is shortened only when
the cursor's state is exactly that (the mark is the old answer's highest id, the newest time seen no older than its
newest) and every element of the old answer had an id and a time that read; then the filter gives the same elements,
in the same order, from the old answer's highest-id elements followed by the new elements as from the whole answer
(``tests/ufm/test_ufm_appended.py`` holds it to that over answers that grow, shrink, change and restart). Anything
else, an answer of other bytes, a state the cursor did not reach, a wrapped or non-UTF-8 body, is decoded whole.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import IO, Any

from fabric.ufm.cursor import CursorState, raw_id
from fabric.ufm.models import UfmTimestamps
from fabric.ufm.spooled import file_digest
from topology.jsonlist import JSON_SPACE, file_items, file_list_bounds, list_items

__all__ = ["EventListMemory"]


@dataclass(slots=True)
class _Answer:
    """What is remembered of an answer decoded whole (or decoded from where the one before it ended)."""

    end: int
    """The offset of its closing ``]``: the bytes before it are the ones a next answer must begin with."""
    digest: bytes
    top_id: int | None = None
    top_items: list[Any] = field(default_factory=list)
    """Its elements holding ``top_id``, in their order."""
    newest: datetime | None = None
    readable: bool = True
    """Every element had an id and a time that read (an element that does not is kept by the filter whatever the
    cursor's state)."""


class EventListMemory:
    """The last event list answered, for ``UfmClient.events``: ``elements`` of each new answer, ``settle`` once
    it was read without fault (an answer that failed is not remembered: the next is decoded whole)."""

    def __init__(self, tz: tzinfo) -> None:
        self._tz = tz
        self._last: _Answer | None = None
        self._reading: _Answer | None = None

    def elements(self, body: IO[bytes], state: CursorState | None) -> Iterator[Any]:
        """The elements of the answer in the open regular file ``body`` that ``drop_handed_over`` under ``state``
        needs to see: all of them, or those of the last answer it could still keep followed by the new ones, when
        ``body`` begins as the last answer did and the cursor has advanced past it. The file is read as the
        elements are asked for: keep it open until then."""
        self._reading = None
        bounds = file_list_bounds(body)
        if bounds is None:
            return file_items(body)
        end = bounds[1]
        last = self._last
        if last is not None and last.end <= end and self._past(last, state):
            digest = file_digest(body, 0, last.end, hashlib.blake2b(digest_size=16))
            if digest.digest() == last.digest:
                appended = os.pread(body.fileno(), end + 1 - last.end, last.end)
                after = appended.lstrip(JSON_SPACE)
                if after == b"]" or after.startswith(b","):
                    digest.update(appended[:-1])
                    answer = _Answer(end, digest.digest(), last.top_id, list(last.top_items), last.newest,
                                     last.readable)
                    new = list_items(b"[" + after[1:]) if after.startswith(b",") else iter(())
                    return self._summing(answer, (*last.top_items,), new)
        answer = _Answer(end, file_digest(body, 0, end, hashlib.blake2b(digest_size=16)).digest())
        return self._summing(answer, (), file_items(body))

    def settle(self) -> None:
        """The answer ``elements`` gave was read without fault: the next one may be read from where it ends."""
        self._last, self._reading = self._reading, None

    @staticmethod
    def _past(last: _Answer, state: CursorState | None) -> bool:
        if state is None or not last.readable or last.top_id is None or last.newest is None:
            return False
        return state.high_water_id == last.top_id and state.last_event_time is not None \
            and state.last_event_time >= last.newest

    def _summing(self, answer: _Answer, kept: tuple[Any, ...], new: Iterator[Any]) -> Iterator[Any]:
        """``kept`` then ``new``, noting in ``answer`` what the new elements add to it."""
        yield from kept
        timestamps = UfmTimestamps(self._tz)
        for item in new:
            # ``dict`` and an ``int`` id first, as UFM sends them, before ``raw_id`` and an ABC's ``isinstance``:
            # their calls were more than half of this loop's cost (0.13 s of 0.23 s over a storm's 393,216 events).
            mapping = type(item) is dict or isinstance(item, Mapping)
            event_id = item.get("id") if mapping else None
            if type(event_id) is not int:
                event_id = raw_id(item)
            try:
                when: datetime | None = timestamps.parse(item.get("timestamp")) if mapping else None
            except ValueError:
                when = None
            if event_id is None or when is None:
                answer.readable = False
            else:
                if answer.top_id is None or event_id > answer.top_id:
                    answer.top_id, answer.top_items = event_id, []
                if event_id == answer.top_id:
                    answer.top_items.append(item)
                if answer.newest is None or when > answer.newest:
                    answer.newest = when
            yield item
        self._reading = answer

