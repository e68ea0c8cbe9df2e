"""A JSON list body decoded one element at a time, so that decoding UFM's event list never holds the GIL long.

UFM answers ``GET /app/events`` with its whole history every time: 43 MB for a 100,000-event storm. One
``json.loads`` of it is a single C call of 0.2-0.4 s, during which no other thread of the process runs: the daemon's
API, which answers from another thread, stalls for that long (``benchmarks/bench_daemon.py``). Decoding the
elements one ``raw_decode`` at a time costs about a third more in all and lets the interpreter switch threads
between any two elements. It also lets the caller drop an element as soon as it is decoded (the events the cursor
handed over already, ``cursor.drop_handed_over``), instead of holding the whole decoded history at once.

What it accepts and refuses is ``json.loads``'s: the same encodings of the bytes, the same values, and a
``ValueError`` (``json.JSONDecodeError``) for any text ``json.loads`` refuses, raised when the iteration reaches
the fault. A body that is a JSON object (UFM's ``{"data": [...]}`` form) is decoded whole and unwrapped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from fabric.ufm.models import unwrap_list

__all__ = ["list_items"]

_SPACE = re.compile(r"[ \t\n\r]*")
"""What JSON counts as whitespace between tokens (``json``'s own scanner skips exactly these)."""
_DECODER = json.JSONDecoder()


def _skip_space(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    assert found is not None  # ``*`` matches the empty string anywhere
    return found.end()


def list_items(body: bytes) -> Iterator[Any]:
    """The elements of the JSON list in ``body`` (bare, or the ``data`` list of an object), one at a time.
    ``ValueError`` when the text is not JSON; ``ShapeError`` when it is JSON but no such list."""
    text = body.decode(json.detect_encoding(body), "surrogatepass")
    start = _skip_space(text, 0)
    if not text.startswith("[", start):
        yield from unwrap_list(json.loads(text))
        return
    decode = _DECODER.raw_decode
    at = _skip_space(text, start + 1)
    if text.startswith("]", at):
        at += 1
    else:
        while True:
            item, at = decode(text, at)
            yield item
            at = _skip_space(text, at)
            if text.startswith(",", at):
                at = _skip_space(text, at + 1)
            elif text.startswith("]", at):
                at += 1
                break
            else:
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
    if _skip_space(text, at) != len(text):
        raise json.JSONDecodeError("Extra data", text, at)
