"""A wiring plan's model kept between runs, so that ``fabricctl verify`` parses an unchanged plan once.

Parsing h100-32k's plan (98,304 cables) takes about a second; rebuilding its model from what an earlier run kept
takes a quarter of that. An entry is found by a SHA-256 of everything the model is made from: the plan's bytes, the
name it was read by (the cables' origins say ``plan.csv:12``), whether it was read leniently, the source of every
module of this package (a release, or any edit, that could build another model from the same bytes misses every
entry kept before it) and the Python version. So a changed plan, or other code, is never answered from an old entry.

Entries live in ``$XDG_CACHE_HOME/fabric-remediation`` (by default ``~/.cache/fabric-remediation``), a directory
that must be the user's own and closed to everyone else (0700), each file the user's own and closed (0600): another
user able to write an entry could make verify answer for a plan it never read. An entry is written to a temporary
file in the directory and renamed into place, so a reader sees a whole entry or none. It holds the SHA-256 of its
payload, checked before the payload is used: an entry cut short, damaged or unreadable is passed over and written
again from the plan, never an error and never an answer. The payload is ``marshal`` of plain values (strings,
numbers, lists), from which this module builds the model itself: unlike ``pickle``, loading it runs no code named
by the file. Only a model the plan's reader built without a conflict (``--lenient-plan`` stepping over one) is kept.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
import tempfile
import time
from contextlib import suppress
from functools import cache
from pathlib import Path

from topology.formats.ndt import parse_ndt_bytes
from topology.inputs import DOCUMENT, read_input
from topology.model import Fabric

KEPT = 16
"""Entries kept: the most recently written; older ones are removed when a new one is written."""
_SUFFIX = ".plan-model"
_ABANDONED_S = 3600
_DIGEST_BYTES = hashlib.sha256().digest_size


def default_directory() -> Path | None:
    """``$XDG_CACHE_HOME/fabric-remediation``, else ``~/.cache/fabric-remediation``; None when neither is known."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(base):  # the XDG base directory specification: a relative path is invalid, ignored
        return Path(base) / "fabric-remediation"
    try:
        return Path.home() / ".cache" / "fabric-remediation"
    except RuntimeError:  # no $HOME and no password entry: nowhere to keep anything
        return None


def read_plan(path: Path, *, lenient: bool = False, directory: Path | None) -> Fabric:
    """``topology.formats.ndt.read_ndt(path, lenient=lenient)``: the same model, taken from ``directory`` when an
    earlier run kept it for these bytes and this code, else parsed and kept there. ``directory=None``: parsed only."""
    data = read_input(path, DOCUMENT)
    code = _code_digest()
    if directory is None or code is None:
        return parse_ndt_bytes(data, str(path), lenient=lenient)
    entry = directory / (_key(code, data, str(path), lenient) + _SUFFIX)
    fabric = _load(directory, entry)
    if fabric is None:
        fabric = parse_ndt_bytes(data, str(path), lenient=lenient)
        if not fabric.conflicts:
            _store(directory, entry, fabric)
    return fabric


def _key(code: bytes, data: bytes, source: str, lenient: bool) -> str:
    digest = hashlib.sha256()
    for part in (code, sys.version.encode(), source.encode("utf-8", "surrogatepass"), b"%d" % lenient):
        digest.update(b"%d:" % len(part) + part)  # each part's length first: no two sets of parts read alike
    digest.update(data)
    return digest.hexdigest()


@cache
def _code_digest() -> bytes | None:
    """The SHA-256 of this package's source (every module of ``topology``, by name): what builds the model. None
    when the package runs from no source files (compiled files only): then nothing tells one release from the next,
    and no model is kept."""
    root = Path(__file__).parent
    if Path(__file__).suffix != ".py":
        return None
    digest = hashlib.sha256()
    for module in sorted(root.rglob("*.py")):
        name = module.relative_to(root).as_posix().encode()
        source = module.read_bytes()
        digest.update(b"%d:%s%d:" % (len(name), name, len(source)) + source)
    return digest.digest()


def _private(status: os.stat_result, kind: int) -> bool:
    """Of the ``kind`` (``stat.S_IFDIR``, ``S_IFREG``), this user's own, and no one else may read or write it."""
    return stat.S_IFMT(status.st_mode) == kind and status.st_uid == os.geteuid() and status.st_mode & 0o077 == 0


def _load(directory: Path, entry: Path) -> Fabric | None:
    """The model kept in ``entry``, or None: none kept, or one that cannot be trusted or read."""
    try:
        # marshal builds plain values and runs nothing, but an entry someone else could have written could still
        # describe another plan: only the user's own, in a directory no one else may enter, is read.
        if not _private(os.lstat(directory), stat.S_IFDIR):
            return None
        descriptor = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # no such entry (the usual miss), no directory, or unreadable
        return None
    try:
        with os.fdopen(descriptor, "rb") as stream:
            if not _private(os.fstat(descriptor), stat.S_IFREG):
                return None
            kept = stream.read(DOCUMENT.limit + 1)
    except OSError:
        return None
    digest, payload = kept[:_DIGEST_BYTES], kept[_DIGEST_BYTES:]
    if hashlib.sha256(payload).digest() != digest:
        return None
    try:
        return Fabric.from_values(marshal.loads(payload))
    except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError):  # a payload of another shape
        return None


def _store(directory: Path, entry: Path, fabric: Fabric) -> None:
    """Keep ``fabric`` in ``entry``, whole or not at all; nothing when the directory cannot be written or is not
    private (it is not made so: it may be someone else's)."""
    payload = marshal.dumps(fabric.values())
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(os.lstat(directory), stat.S_IFDIR):
            return
        descriptor, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=directory)  # mode 0600
        try:
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(hashlib.sha256(payload).digest())
                stream.write(payload)
            os.replace(temporary, entry)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary)
            raise
        _prune(directory)
    except OSError:  # a full disk, a read-only home: the plan was read, keeping it is only a saving
        return


def _prune(directory: Path) -> None:
    """All but the ``KEPT`` newest entries removed, and the temporary files of writers that died an hour ago or
    more (one still writing is younger)."""
    entries = sorted(directory.glob("*" + _SUFFIX), key=lambda entry: entry.stat().st_mtime, reverse=True)
    abandoned = [temporary for temporary in directory.glob(".*.tmp")
                 if temporary.stat().st_mtime < time.time() - _ABANDONED_S]
    for old in entries[KEPT:] + abandoned:
        with suppress(OSError):  # another run removed it first
            old.unlink()
