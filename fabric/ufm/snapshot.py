"""One read of UFM's systems, links and ports, and the as-built fabric they describe.

``verify --ufm`` and the engine both read UFM's view of the fabric through this module, so they agree on
what "as built" means (the same three resources, read in parallel, turned into a ``Fabric`` the same way).
Saved (``fabricctl ufm snapshot``, ``fabricctl simulate --snapshot``) it is the directory that ``verify
--as-built`` and ``replay --as-built`` read: ``systems.json``, ``links.json``, ``ports.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fabric.ufm.models import Link, Port, System
from topology.formats.ufm_snapshot import DOCUMENTS, fabric_from_ufm
from topology.model import Fabric


class TopologySource(Protocol):
    """What a snapshot reads (``UfmClient`` provides it)."""

    async def systems(self, type: str | None = None) -> list[System]: ...
    async def links(self) -> list[Link]: ...
    async def ports(self, system: str | None = None) -> list[Port]: ...


@dataclass(frozen=True, slots=True)
class UfmSnapshot:
    systems: list[System]
    links: list[Link]
    ports: list[Port]

    def fabric(self, source: str, *, prefix: str | None = None) -> Fabric:
        """The as-built fabric; errors cite ``GET <prefix>/resources/<name>`` when ``prefix`` is given."""
        documents = ({name: f"GET {prefix}/resources/{name}" for name in ("systems", "links", "ports")}
                     if prefix is not None else None)
        return fabric_from_ufm([s.model_dump() for s in self.systems], [link.model_dump() for link in self.links],
                               [p.model_dump() for p in self.ports], source, documents=documents)

    def documents(self) -> dict[str, list[dict[str, Any]]]:
        """The three resources as JSON-ready lists, keyed ``systems``, ``links``, ``ports``."""
        return {"systems": [s.model_dump(mode="json") for s in self.systems],
                "links": [link.model_dump(mode="json") for link in self.links],
                "ports": [p.model_dump(mode="json") for p in self.ports]}

    def write(self, directory: Path) -> None:
        """Save the snapshot as ``directory``/systems.json, links.json and ports.json (OSError if it cannot)."""
        write_snapshot_documents(directory, {name: json.dumps(items, indent=1).encode()
                                             for name, items in self.documents().items()})

    def disabled_ports(self) -> set[str]:
        """UFM ports whose physical state is Disabled."""
        return {p.name for p in self.ports if p.is_disabled}


async def fetch_snapshot(ufm: TopologySource) -> UfmSnapshot:
    """The three reads in parallel.  When one fails the others are cancelled and waited for before the error
    is raised, so none is left running (and retrying) against a client its caller is about to close."""
    systems, links, ports = (asyncio.ensure_future(ufm.systems()), asyncio.ensure_future(ufm.links()),
                             asyncio.ensure_future(ufm.ports()))
    reads = (systems, links, ports)
    try:
        await asyncio.gather(*reads)
    except BaseException:
        for read in reads:
            read.cancel()
        await asyncio.gather(*reads, return_exceptions=True)
        raise
    return UfmSnapshot(systems.result(), links.result(), ports.result())


def write_snapshot_documents(directory: Path, documents: Mapping[str, bytes]) -> None:
    """Write each of ``systems``, ``links`` and ``ports`` (encoded JSON) to ``directory``/<name>.json.

    All three are written beside their final names first and only then renamed over them, so a failed write
    leaves an existing snapshot as it was.  Raises OSError (e.g. the directory cannot be created or written).
    """
    if set(documents) != set(DOCUMENTS):
        raise ValueError(f"a snapshot is exactly {', '.join(DOCUMENTS)}, got {', '.join(sorted(documents))}")
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    try:
        for name in DOCUMENTS:
            handle, written[name] = tempfile.mkstemp(prefix=f".{name}.", suffix=".json", dir=directory)
            with os.fdopen(handle, "wb") as out:
                out.write(documents[name])
        for name in DOCUMENTS:
            os.replace(written.pop(name), directory / f"{name}.json")
    finally:
        for leftover in written.values():
            os.unlink(leftover)
