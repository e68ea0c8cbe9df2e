"""Where an as-built fabric comes from: a live UFM, a UFM snapshot directory, an ibnetdiscover dump, a plan."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from topology.errors import InputError
from topology.model import Fabric

if TYPE_CHECKING:
    from fabric.ufm.client import UfmClient

_IBNETDISCOVER_MARKERS = ("vendid=", "switchguid=", "caguid=", "sysimgguid=")
_SNIFF_BYTES = 64 * 1024


def load_as_built(source: Path) -> Fabric:
    """Read ``source``: a directory of UFM REST responses, an ``ibnetdiscover`` dump, or an NDT CSV."""
    if source.is_dir():
        from topology.formats.ufm_snapshot import read_ufm_snapshot

        return read_ufm_snapshot(source)
    if not source.exists():
        raise InputError("no such file or directory", source=str(source))
    with source.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES).decode("utf-8", errors="replace")
    if any(marker in head for marker in _IBNETDISCOVER_MARKERS):
        from topology.formats.ibnetdiscover import read_ibnetdiscover

        return read_ibnetdiscover(source)
    from topology.formats.ndt import read_ndt

    return read_ndt(source)


async def fetch_from_ufm(client: UfmClient) -> Fabric:
    """The as-built fabric as a live UFM sees it: its systems, links and ports, read in parallel."""
    import asyncio

    from topology.formats.ufm_snapshot import fabric_from_ufm

    systems, links, ports = await asyncio.gather(client.systems(), client.links(), client.ports())
    base = str(client.base_url) + client.prefix
    return fabric_from_ufm(
        [s.model_dump() for s in systems], [link.model_dump() for link in links], [p.model_dump() for p in ports],
        base, documents={name: f"GET {base}/resources/{name}" for name in ("systems", "links", "ports")},
    )
