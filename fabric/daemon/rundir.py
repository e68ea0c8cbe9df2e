"""Files the daemon's two processes hand each other in its run directory, each written whole or not at all.

The run directory is the API process's (private, mode 0700: ``fabric.daemon.process``); the engine process writes
its status record there (``status_record``) and, once for the run, the plan's index (``plan_handoff``). A file is
written under a temporary name in the same directory and renamed over the old one, so a reader finds the last
whole file, never part of one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_whole(directory: Path, name: str, data: bytes) -> None:
    """``data`` as ``directory / name``, replacing it whole, or nothing written (the temporary file removed)."""
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}-")
    try:
        with os.fdopen(handle, "wb") as sink:
            sink.write(data)
        os.replace(temporary, directory / name)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
