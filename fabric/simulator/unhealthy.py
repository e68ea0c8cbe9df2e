"""``/app/unhealthy_ports``: ports marked unhealthy by hand (``PUT``) or by the SM's health policy.

Entry fields from the UFM REST guide (list example): ``UnhealthyGUID``, ``UnhealthyPort``,
``UnhealthyPortNumber``, ``UnhealthyPortDname``, ``UnhealthyNode``, ``Peer*``, ``State``, ``Condition``,
``StatusTime``.  The port asked for is put on the ``Peer*`` side and the far end of its cable on the
``Unhealthy*`` side, which is what NVIDIA's own ``batch_isolate_devices.py`` (UFM SDK) expects: it marks switch
ports and then waits until no entry has ``PeerGUID`` and ``PeerPortDname`` equal to them. The REST guide does not
say; a port with no cable is on the ``Unhealthy*`` side with ``N/A`` peers. ``State`` holds the action
(``isolate``/``no_discover``; UNCONFIRMED wording) and ``Condition`` is a string (``MANUAL`` for a PUT), as in the
list example.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fabric.simulator.events import ms_timestamp
from topology.formats.ufm_render import PortRef

UNHEALTHY_ACTIONS = ("isolate", "no_discover")
"""What a port marked unhealthy gets (``action`` of ``PUT /app/unhealthy_ports``)."""


@dataclass(slots=True)
class UnhealthyEntry:
    port: PortRef
    """The port asked for (or the SM's health policy found)."""
    peer: PortRef | None
    action: str
    condition: str
    since: datetime

    def to_rest(self) -> dict[str, Any]:
        unhealthy, peer = (self.peer, self.port) if self.peer is not None else (self.port, None)
        return {
            "UnhealthyGUID": unhealthy.guid, "UnhealthyPort": unhealthy.name,
            "UnhealthyPortNumber": str(unhealthy.number), "UnhealthyPortDname": unhealthy.dname,
            "UnhealthyNode": unhealthy.system_name,
            "PeerGUID": peer.guid if peer else "N/A", "PeerPort": peer.name if peer else "N/A",
            "PeerPortNumber": str(peer.number) if peer else "N/A", "PeerPortDname": peer.dname if peer else "N/A",
            "PeerNode": peer.system_name if peer else "N/A", "PeerLID": 0,
            "State": self.action, "Condition": self.condition, "StatusTime": ms_timestamp(self.since),
        }


class UnhealthyPorts:
    def __init__(self) -> None:
        self._entries: dict[str, UnhealthyEntry] = {}
        self.asked: list[tuple[datetime, str, str]] = []
        """Every change ``PUT`` asked for, in order: (when, ``UNHEALTHY`` or ``HEALTHY``, port), whatever it
        changed. Not served: the record a test judges a client's writes by, as it judges port actions by the
        jobs (a port marked unhealthy twice, more ports marked at once than a limit allows)."""

    def __len__(self) -> int:
        return len(self._entries)

    def mark(self, port: PortRef, peer: PortRef | None, action: str, condition: str, when: datetime) -> bool:
        current = self._entries.get(port.name)
        if current is not None and current.action == action and current.condition == condition:
            return False
        self._entries[port.name] = UnhealthyEntry(port, peer, action, condition, when)
        return True

    def clear(self, port: str) -> bool:
        return self._entries.pop(port, None) is not None

    def get(self, port: str) -> UnhealthyEntry | None:
        return self._entries.get(port)

    def isolated(self) -> list[str]:
        """The ports marked ``isolate``: what the subnet manager's next sweep isolates."""
        return [name for name, entry in self._entries.items() if entry.action == "isolate"]

    def names(self) -> list[str]:
        return list(self._entries)

    def to_rest(self) -> list[dict[str, Any]]:
        return [entry.to_rest() for entry in self._entries.values()]
