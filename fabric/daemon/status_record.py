"""The engine process's status record: what its engine last saw and did, and its metrics, for the API process.

The engine process (``fabric.daemon.engine_process``) writes the record every ``WRITE_EVERY`` seconds and after each
job; the API process reads it on each ``/status``, ``/readyz`` and ``/metrics``. A file in the daemon's run
directory, not a database row: it is one instance's (a standby's engine process has its own), the API reads it
without a query queued behind the engine's writes, and the database sees no write a second for it. Written to a
temporary file and renamed over the record, so a reader finds the last whole record, never part of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import TypeAdapter

from fabric.api.context import RuntimeStatus
from fabric.daemon.rundir import write_whole
from topology import strictjson

RECORD_NAME = "engine-status.json"
WRITE_EVERY = 0.5
"""Seconds between two writes while nothing else asks for one: how stale the leadership and metrics may be."""


@dataclass(frozen=True, slots=True)
class StatusRecord:
    pid: int
    """The engine process that wrote it (an older process's record says nothing of the one running now)."""
    written: float
    """When it was written, on the monotonic clock (``time.monotonic``: the same in both processes of one host)."""
    clock: datetime
    """The engine's clock then: the simulator's time, under ``--clock simulator``, is the API process's too."""
    status: RuntimeStatus
    metrics: str
    """The engine process's metrics, in Prometheus' text exposition format."""


_RECORD = TypeAdapter(StatusRecord)


def write_record(directory: Path, record: StatusRecord) -> None:
    """``record`` as the directory's status record, whole or not at all."""
    write_whole(directory, RECORD_NAME, _RECORD.dump_json(record))


class RecordReader:
    """The directory's status record, decoded again only when the file changed."""

    def __init__(self, directory: Path) -> None:
        self._path = directory / RECORD_NAME
        self._seen: tuple[int, int] | None = None
        self._record: StatusRecord | None = None

    def read(self) -> StatusRecord | None:
        """The last record written (``None``: none yet, or one this code cannot read)."""
        try:
            stat = self._path.stat()
        except FileNotFoundError:
            return None
        key = (stat.st_ino, stat.st_mtime_ns)  # renamed over: a new inode every write
        if key != self._seen:
            try:
                self._record = _RECORD.validate_python(strictjson.loads(self._path.read_bytes()))
            except (FileNotFoundError, ValueError):  # a JsonError or a ValidationError: both ValueErrors
                self._record = None
            self._seen = key
        return self._record
