"""Every file the project reads by path, opened one way: devices refused, a whole read bounded.

Plans, ibnetdiscover dumps, UFM snapshot files, event files, the configuration, scenarios, secrets and CA bundles
are named by an operator, on the command line or in the configuration, and a wrong name must cost one line, not
the machine: ``/dev/zero`` read whole grows the process until the kernel kills it, a terminal or a tape waits
forever. So :func:`open_input` refuses what no reader here can use — a directory, a character or block device, a
socket — before opening it, and opens a regular file or a pipe (a FIFO, ``<(zcat week.log.gz)``, the standard
input), which are streams a command may read as it goes. :func:`read_input` reads one whole within a ``Bound``
and never reads more than the bound and one byte, so an endless pipe costs the bound, not all memory; the
message names the bound. :func:`peeked` lets a reader look at a stream's first bytes (to tell its format) and
then read the same stream from its start, which a pipe, read once, needs. :func:`capped_lines` reads a stream a
line at a time with a bound on a line, for the readers that stream.

Every refusal is an :class:`~topology.errors.InputError` naming the path.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, AnyStr

from topology.errors import InputError

__all__ = ["CONFIGURATION", "DOCUMENT", "LINE_LIMIT", "SECRET", "STDIN", "Bound", "capped_lines", "open_input",
           "peeked", "read_input", "read_stream"]

STDIN = "-"
"""The name a command that streams takes for its standard input (``replay --events -``)."""


@dataclass(frozen=True, slots=True)
class Bound:
    """The most a file of one kind may hold to be read whole, and what the kind is called in a refusal."""

    limit: int
    """Bytes."""
    kinds: str

    def shown(self) -> str:
        for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if self.limit >= size and self.limit % size == 0:
                return f"{self.limit // size} {unit}"
        return f"{self.limit:,} bytes"


DOCUMENT = Bound(1 << 30, "a wiring plan, ibnetdiscover dump, UFM snapshot file or event document")
"""h100-32k's largest document, its ports.json as the simulator writes it, is 146 MB; its plan 6 MB."""
CONFIGURATION = Bound(16 << 20, "a configuration, scenario or CA bundle file")
"""A configuration is a few KiB; a system's whole CA bundle some 200 KiB."""
SECRET = Bound(64 << 10, "a secret file")
"""A password, token or key is a line."""
_PIPE_CHUNK = 1 << 20
"""How much of a pipe one read asks for: memory grows with what arrives, never by the bound at once."""
LINE_LIMIT = 1 << 20
"""The longest line, in bytes or characters, a reader that streams takes (an event.log or JSON lines record is
under 2 KiB)."""

_REFUSED_KINDS = (
    (stat.S_ISDIR, "is a directory, not a file"),
    (stat.S_ISCHR, "is a character device (like /dev/zero or a terminal), not a file"),
    (stat.S_ISBLK, "is a block device, not a file"),
    (stat.S_ISSOCK, "is a socket, not a file"),
)


def _refusal(mode: int) -> str | None:
    """Why a file of this mode cannot be read as input (``None``: a regular file or a pipe, which can)."""
    return next((why for test, why in _REFUSED_KINDS if test(mode)), None)


def open_input(path: str | os.PathLike[str], *, stdin: bool = False) -> io.BufferedReader:
    """``path`` open for reading, in binary: a regular file or a pipe; with ``stdin`` (a command that reads its
    standard input), ``STDIN`` names it. ``InputError`` for a path that does not exist or cannot be read, and for
    a directory, a device (a terminal as the standard input too) or a socket, refused before they are opened
    (opening a device can act on it). A FIFO with no writer waits here for one, as any reader of it does."""
    name = str(path)
    if stdin and name == STDIN:
        try:
            return _checked(os.dup(0), "the standard input")  # a copy: closing the stream leaves fd 0 open
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source="the standard input") from None
    try:
        why = _refusal(os.stat(path).st_mode)
        if why is not None:
            raise InputError(why, source=name)
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError("no such file", source=name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=name) from None
    return _checked(descriptor, name)


def _checked(descriptor: int, name: str) -> io.BufferedReader:
    """The open ``descriptor`` as a stream, once what it is was checked again (the path may have been replaced
    since it was looked at; the standard input was not looked at)."""
    why = _refusal(os.fstat(descriptor).st_mode)
    if why is not None:
        os.close(descriptor)
        raise InputError(why, source=name)
    return os.fdopen(descriptor, "rb")


def read_input(path: str | os.PathLike[str], bound: Bound) -> bytes:
    """The whole content of ``path`` (opened by :func:`open_input`), refused when it holds more than ``bound``.
    A regular file's size is checked before reading it; a pipe is read up to the bound and one byte."""
    with open_input(path) as stream:
        return read_stream(stream, bound, str(path))


def read_stream(stream: IO[bytes], bound: Bound, name: str) -> bytes:
    """The rest of an open ``stream`` (named ``name`` in errors), refused when it holds more than ``bound``."""
    want = _PIPE_CHUNK
    try:
        status = os.fstat(stream.fileno())
        if stat.S_ISREG(status.st_mode):
            left = status.st_size - stream.tell()
            if left > bound.limit:
                raise _too_large(bound, name)
            want = left + 1  # the whole file in one read, and a byte more to see that it did not grow meanwhile
    except (OSError, io.UnsupportedOperation):  # a pipe, or a stream with no file behind it: read a piece at a time
        pass
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= bound.limit and (chunk := stream.read(min(want, bound.limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
            want = _PIPE_CHUNK
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=name) from None
    if size > bound.limit:
        raise _too_large(bound, name)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(bound: Bound, name: str) -> InputError:
    return InputError(f"larger than {bound.shown()}, the most {bound.kinds} may hold", source=name)


def peeked(stream: IO[bytes], size: int) -> tuple[bytes, io.BufferedReader]:
    """The first ``size`` bytes of ``stream`` (fewer when it ends first), and a stream that reads ``stream`` from
    its start all the same: those bytes again, then the rest. A pipe cannot be read twice, nor sought."""
    head = bytearray()
    while len(head) < size and (chunk := stream.read(size - len(head))):
        head += chunk
    return bytes(head), io.BufferedReader(_Replayed(bytes(head), stream))


class _Replayed(io.RawIOBase):
    """Bytes read ahead from a stream, then the rest of that stream; closing it closes the stream."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = memoryview(head)
        self._rest = rest
        # What the stream has now (a buffered stream's read1), not a full buffer: a pipe is read as it comes.
        self._read: Callable[[int], bytes] = getattr(rest, "read1", rest.read)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        data = self._read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def fileno(self) -> int:
        return self._rest.fileno()

    def close(self) -> None:
        if not self.closed:
            self._rest.close()
        super().close()


def capped_lines(stream: IO[AnyStr], limit: int = LINE_LIMIT) -> Iterator[AnyStr]:
    """The lines of ``stream`` (binary or text), each with its line end; a line longer than ``limit`` (bytes or
    characters) is given cut to ``limit + 1`` (so that the reader can tell it from one that fits, and say so) and
    the rest of it is read past, never held: an endless line from a pipe costs ``limit``."""
    while line := stream.readline(limit + 1):
        if len(line) > limit and line[-1:] not in ("\n", b"\n"):
            while (rest := stream.readline(limit)) and rest[-1:] not in ("\n", b"\n"):
                pass
        yield line
