"""Paths from each leaf to the top of the fat tree (CorrOpt's ``paths_to_core``).

``paths(top) = 1``; ``paths(s) = sum of paths(u)`` over the live cables from ``s`` up to a switch ``u``
one tier higher. For a three-tier tree that is CorrOpt's sum, over a leaf's live uplinks, of each spine's
live core uplinks; for a two-tier tree it is the leaf's live uplink count. Alongside the count we keep the
set of top switches a leaf can reach, because a miswired top layer (eight disjoint networks) keeps every
count intact while each leaf reaches only an eighth of the cores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from topology.model import TIER_RANK, Cable, Tier


@dataclass(frozen=True, slots=True)
class LeafPaths:
    leaf: str
    paths: int
    tops_reached: int


def leaf_paths(tiers: Mapping[str, Tier], cables: Iterable[Cable]) -> dict[str, LeafPaths]:
    """Per-leaf paths to the top tier over ``cables``; devices whose tier is unknown are ignored."""
    ranks = {key: TIER_RANK[t] for key, t in tiers.items() if t in TIER_RANK and t is not Tier.HOST}
    if not ranks:
        return {}
    top = max(ranks.values())
    uplinks: dict[str, list[str]] = defaultdict(list)
    for cable in cables:
        ra, rb = ranks.get(cable.a.device), ranks.get(cable.b.device)
        if ra is None or rb is None:
            continue
        if rb == ra + 1:
            uplinks[cable.a.device].append(cable.b.device)
        elif ra == rb + 1:
            uplinks[cable.b.device].append(cable.a.device)
    top_index = {key: i for i, key in enumerate(sorted(k for k, r in ranks.items() if r == top))}
    paths: dict[str, int] = {}
    reach: dict[str, int] = {}
    for key, rank in sorted(ranks.items(), key=lambda kv: -kv[1]):
        if rank == top:
            paths[key], reach[key] = 1, 1 << top_index[key]
            continue
        total, bits = 0, 0
        for upper in uplinks.get(key, ()):
            total += paths.get(upper, 0)
            bits |= reach.get(upper, 0)
        paths[key], reach[key] = total, bits
    leaf_rank = TIER_RANK[Tier.LEAF]
    return {
        key: LeafPaths(key, paths[key], reach[key].bit_count())
        for key, rank in ranks.items()
        if rank == leaf_rank
    }
