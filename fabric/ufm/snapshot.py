"""One read of UFM's systems, links and ports, and the as-built fabric they describe.

``verify --ufm`` and the engine both read UFM's view of the fabric through this module, so they agree on
what "as built" means (the same three resources, read in parallel, turned into a ``Fabric`` the same way).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from fabric.ufm.models import Link, Port, System
from topology.formats.ufm_snapshot import fabric_from_ufm
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

    def disabled_ports(self) -> set[str]:
        """UFM ports whose physical state is Disabled."""
        return {p.name for p in self.ports if p.is_disabled}


async def fetch_snapshot(ufm: TopologySource) -> UfmSnapshot:
    systems, links, ports = await asyncio.gather(ufm.systems(), ufm.links(), ufm.ports())
    return UfmSnapshot(systems, links, ports)
