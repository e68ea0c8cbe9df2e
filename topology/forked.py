"""Half of a one-shot command's work on the machine's other core: a forked child that hands back plain values.

``fabricctl verify`` spends most of its time decoding UFM's ports.json, which no other step waits on for its first
half: a child forked from the command's process decodes the second half while the process decodes the first
(``topology.formats.ufm_snapshot``). The child gets the parent's memory as it is at the fork (the open file, the
builder's settings), and gives back one ``marshal``-ed value through a pipe (plain values: tuples, strings, numbers,
``None``; nothing of the parent's objects, so no pickling of the model).

Only where it is safe and worth it: a fork copies only the thread that calls it, so a process running other
threads (a lock held by one would stay held in the child) never forks; nor does one that may use a single CPU.
Anything the child cannot do (an exception, a value ``marshal`` refuses, a signal) comes back as ``None``, and the
caller does the work itself, the way it does without a child: what the command says about bad input is then the
same either way.
"""

from __future__ import annotations

import marshal
import os
import threading
from collections.abc import Callable
from typing import Any

_FAILED = b"-"
_DONE = b"+"


def may_fork() -> bool:
    """Whether a child may be forked here: a POSIX fork, no other thread, and more than one CPU to run on."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    return len(cpus) > 1


def in_child(work: Callable[[], Any]) -> Callable[[], Any]:
    """``work`` started in a forked child now; the call returned waits for the child and gives what ``work``
    returned, or ``None`` when it failed. Call it once, on every path (it reaps the child): a caller that no longer
    wants the result still calls it."""
    readable, writable = os.pipe()
    try:
        child = os.fork()
    except OSError:  # no process to be had (EAGAIN, ENOMEM): the caller does the work itself
        os.close(readable)
        os.close(writable)
        return lambda: None
    if child == 0:  # pragma: no cover - the child's lines run in the forked process, which coverage does not follow
        os.close(readable)
        try:
            said = _DONE + marshal.dumps(work())
        except BaseException:
            said = _FAILED
        try:
            with os.fdopen(writable, "wb") as pipe:
                pipe.write(said)
        finally:
            os._exit(0)  # no atexit handlers, no buffers of the parent's flushed twice
    os.close(writable)

    def result() -> Any:
        with os.fdopen(readable, "rb") as pipe:
            said = pipe.read()
        _, status = os.waitpid(child, 0)
        if status != 0 or not said.startswith(_DONE):
            return None
        try:
            return marshal.loads(said[1:])
        except (EOFError, ValueError, TypeError):
            return None

    return result
