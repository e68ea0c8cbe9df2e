"""Where an as-built fabric comes from on disk: a UFM snapshot directory, an ``ibnetdiscover`` dump or a plan.

The source is sniffed, not named: a directory is a snapshot, a file with ibnetdiscover's markers is a dump, and
anything else is read as an NDT CSV (whose reader names the line that does not fit).
"""

from __future__ import annotations

from pathlib import Path

from topology.errors import InputError
from topology.inputs import DOCUMENT, read_input
from topology.model import Fabric

_IBNETDISCOVER_MARKERS = ("vendid=", "switchguid=", "caguid=", "sysimgguid=")
_SNIFF_BYTES = 64 * 1024


def load_as_built(source: Path) -> Fabric:
    """Read ``source``: a directory of UFM REST responses, an ``ibnetdiscover`` dump, or an NDT CSV."""
    if source.is_dir():
        from topology.formats.ufm_snapshot import read_ufm_snapshot

        return read_ufm_snapshot(source)
    if not source.exists():
        raise InputError("no such file or directory", source=str(source))
    data = read_input(source, DOCUMENT)  # read once: a pipe can be read only once
    head = data[:_SNIFF_BYTES].decode("utf-8", errors="replace")
    if any(marker in head for marker in _IBNETDISCOVER_MARKERS):
        from topology.formats.ibnetdiscover import parse_ibnetdiscover_bytes

        return parse_ibnetdiscover_bytes(data, str(source))
    from topology.formats.ndt import parse_ndt_bytes

    return parse_ndt_bytes(data, str(source), plan=False)  # an as-built CSV: its names are what they are
