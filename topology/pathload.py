"""How traffic between two switches spreads over the fabric's cables under adaptive routing.

Adaptive routing spreads a flow evenly over the shortest paths between its ends. A path is a sequence of
cables, so two parallel cables between the same switches are two paths: a cable's share of the flow is the
number of shortest paths through it over the number of shortest paths in all, the edge betweenness of one pair.
With ``paths_s(v)`` the shortest paths from ``s`` to ``v`` (counted by a breadth-first search), a cable from ``u``
to ``v`` lies on a shortest ``s``-``t`` path when ``d_s(u) + 1 + d_t(v) = d_s(t)``, and carries
``paths_s(u) * paths_t(v) / paths_s(t)`` of the flow. Only switch-to-switch cables are walked: a flow's adapters
and their own cables are the caller's.

Searches are made once per switch a flow starts or ends at and kept, and each pair's shares once per pair of
switches: a burn-in stage on h100-4k has thousands of adapter pairs but a few dozen pairs of leaves.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from topology.model import Fabric
from topology.ports import Kind


@dataclass(frozen=True, slots=True)
class Reach:
    """A breadth-first search from one switch over switch-to-switch cables."""

    distance: dict[str, int]
    paths: dict[str, int]
    """Shortest paths from the source to each switch, parallel cables each counting."""
    order: list[str]
    """Switches by distance from the source, nearest first."""


class PathLoads:
    """Each cable's share of a flow between two switches of ``fabric`` (cables by their index in ``fabric.cables``)."""

    def __init__(self, fabric: Fabric) -> None:
        self._links: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for index, cable in enumerate(fabric.cables):
            a, b = fabric.devices[cable.a.device], fabric.devices[cable.b.device]
            if a.kind is Kind.SWITCH and b.kind is Kind.SWITCH:
                self._links[a.key].append((b.key, index))
                self._links[b.key].append((a.key, index))
        self._reaches: dict[str, Reach] = {}
        self._shares: dict[tuple[str, str], dict[int, float]] = {}

    def reach(self, source: str) -> Reach:
        found = self._reaches.get(source)
        if found is None:
            found = self._reaches[source] = self._search(source)
        return found

    def _search(self, source: str) -> Reach:
        distance, paths, order = {source: 0}, {source: 1}, [source]
        for switch in order:  # grows as it is walked: a queue that keeps what it served
            step = distance[switch] + 1
            for neighbour, _ in self._links.get(switch, ()):
                seen = distance.get(neighbour)
                if seen is None:
                    distance[neighbour] = step
                    paths[neighbour] = paths[switch]
                    order.append(neighbour)
                elif seen == step:
                    paths[neighbour] += paths[switch]
        return Reach(distance, paths, order)

    def shares(self, source: str, target: str) -> dict[int, float]:
        """Each cable's share of a flow from switch ``source`` to switch ``target``: empty when they are one switch
        or not connected. The same for the flow back (a shortest path reversed is one), so kept once per pair."""
        pair = (source, target) if source <= target else (target, source)
        found = self._shares.get(pair)
        if found is None:
            found = self._shares[pair] = self._spread(*pair)
        return found

    def _spread(self, source: str, target: str) -> dict[int, float]:
        forward, backward = self.reach(source), self.reach(target)
        length = forward.distance.get(target)
        if length is None or length == 0:
            return {}
        total = forward.paths[target]
        shares: dict[int, float] = {}
        for switch in forward.order:
            step = forward.distance[switch]
            if step >= length:
                break
            if backward.distance.get(switch) != length - step:
                continue  # on no shortest path to the target
            rest = length - step - 1
            for neighbour, index in self._links[switch]:
                if forward.distance.get(neighbour) == step + 1 and backward.distance.get(neighbour) == rest:
                    shares[index] = shares.get(index, 0.0) + forward.paths[switch] * backward.paths[neighbour] / total
        return shares
