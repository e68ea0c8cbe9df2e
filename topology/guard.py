"""The capacity guard: may this switch-switch cable be taken out of service right now?

Three independent limits, each reported with its figures so that every decision can be explained:

1. **Capacity** (CorrOpt's fast checker). Every leaf affected keeps ``paths_to_core >= ceil(c x planned)``.
   A leaf-spine cable affects its leaf; a spine-core cable affects every leaf under the spine.
2. **Blast radius.** At most ``max(floor, fraction x switch-switch cables)`` cables disabled by automation at
   once, never more than the hard ceiling (5 %, far below the ~10 % where adaptive routing stops coping).
3. **Rate.** At most ``hourly_limit`` new disables in any sliding hour.

Capacity counts every cable that is not carrying traffic, whatever the reason (a link UFM reports down
counts as much as one we disabled); the blast radius and the rate count only what automation did, host links
included (when the policy lets automation disable them: no path to core depends on one, but a node loses a rail).

The guard keeps per-switch counters (live cables to each upper neighbour and paths to the top) so that a
decision costs a walk over the leaves under one spine, not a recomputation of the graph.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from topology.model import TIER_RANK, End, Fabric, Tier

CableKey = tuple[End, End]
HARD_CEILING = 0.05
RATE_WINDOW = timedelta(hours=1)
"""The sliding window of the hourly rate limit."""
_GENERATIONS = itertools.count(1)
"""Where every guard's ``generation`` comes from: one sequence for the process, so that two guards (one replacing
the other on a reload) never show the same number for different states."""


@dataclass(frozen=True, slots=True)
class GuardSettings:
    c: float = 0.75
    """Share of its planned paths to core every leaf must keep."""
    cap_fraction: float = 0.005
    cap_floor: int = 10
    hourly_limit: int = 20

    def cap(self, switch_cables: int) -> int:
        fraction = min(self.cap_fraction, HARD_CEILING)
        ceiling = math.floor(HARD_CEILING * switch_cables)
        return min(max(self.cap_floor, math.floor(fraction * switch_cables)), ceiling)


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    limit: str | None
    """``capacity``, ``blast_radius`` or ``rate`` when refused; None when allowed."""
    reason: str
    figures: dict[str, Any] = field(default_factory=dict)


class GuardReading(Protocol):
    """What a capacity guard shows to those who read it (status, metrics, reconciliation, tests): its figures and its
    verdicts, and nothing that changes it. Only the remediation policy changes a guard; everything else is handed
    this view of it, so that the type checker refuses a back door."""

    @property
    def settings(self) -> GuardSettings: ...
    @property
    def names(self) -> Mapping[str, str]: ...
    @property
    def planned(self) -> Mapping[str, int]: ...
    @property
    def minimum(self) -> Mapping[str, int]: ...
    @property
    def paths(self) -> Mapping[str, int]: ...
    @property
    def out(self) -> AbstractSet[CableKey]: ...
    @property
    def disabled(self) -> AbstractSet[CableKey]: ...
    @property
    def recent(self) -> Sequence[datetime]: ...
    @property
    def cap(self) -> int: ...

    def verdict(self, cable: CableKey, now: datetime, *, rate_counted: bool = False) -> Verdict: ...
    def disables_within_hour(self, now: datetime) -> int: ...


class CapacityGuard:
    def __init__(self, plan: Fabric, settings: GuardSettings | None = None) -> None:
        self.settings = settings or GuardSettings()
        self.names = {key: device.name for key, device in plan.devices.items()}
        self.rank = {d.key: TIER_RANK[d.tier] for d in plan.switches() if d.tier in TIER_RANK}
        self.top = max(self.rank.values(), default=0)
        self.leaf_rank = TIER_RANK[Tier.LEAF]
        # Live cables from each switch to each upper neighbour, and the reverse view.
        self.up: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.down: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.orientation: dict[CableKey, tuple[str, str]] = {}
        for cable in plan.cables:
            pair = self._orient(cable.a.device, cable.b.device)
            if pair is not None:
                self.orientation[cable.key] = pair
                self.up[pair[0]][pair[1]] += 1
                self.down[pair[1]][pair[0]] += 1
        self.paths: dict[str, int] = {}
        for node in sorted(self.rank, key=lambda n: -self.rank[n]):
            self.paths[node] = 1 if self.rank[node] == self.top else sum(
                count * self.paths[upper] for upper, count in self.up[node].items())
        self.planned = {n: p for n, p in self.paths.items() if self.rank[n] == self.leaf_rank}
        self.minimum = {n: math.ceil(self.settings.c * p) for n, p in self.planned.items()}
        self.out: set[CableKey] = set()
        """Guarded cables not carrying traffic (down in UFM or disabled)."""
        self.disabled: set[CableKey] = set()
        """Cables automation took out (the blast radius counts these)."""
        self.recent: deque[datetime] = deque()
        self.cap = self.settings.cap(len(self.orientation))
        self.generation = next(_GENERATIONS)
        """Changes whenever what a verdict depends on changes, but for the sliding hour's disables (which
        ``disables_within_hour`` counts): a number no other guard of the process has held, so that one who saw it
        can tell this state from any other."""

    def _changed(self) -> None:
        self.generation = next(_GENERATIONS)

    def _orient(self, a: str, b: str) -> tuple[str, str] | None:
        ra, rb = self.rank.get(a), self.rank.get(b)
        if ra is None or rb is None:
            return None
        if rb == ra + 1:
            return a, b
        if ra == rb + 1:
            return b, a
        return None

    def guards(self, cable: CableKey) -> bool:
        """True for a switch-switch cable between adjacent tiers: the ones whose loss costs paths to core."""
        return cable in self.orientation

    # --- what a change would do ----------------------------------------------------------------------

    def _leaf_deltas(self, node: str, delta: int, into: dict[str, int]) -> None:
        if self.rank[node] == self.leaf_rank:
            into[node] = into.get(node, 0) + delta
            return
        for lower, count in self.down[node].items():
            self._leaf_deltas(lower, count * delta, into)

    def _effect(self, cable: CableKey, sign: int) -> tuple[str, dict[str, int]]:
        lower, upper = self.orientation[cable]
        deltas: dict[str, int] = {}
        self._leaf_deltas(lower, sign * self.paths[upper], deltas)
        return lower, deltas

    # --- decisions -----------------------------------------------------------------------------------

    def verdict(self, cable: CableKey, now: datetime, *, rate_counted: bool = False) -> Verdict:
        """May automation disable ``cable`` at ``now``? Nothing changes until ``take_out``. ``rate_counted``: the
        disable is one the sliding hour already counts (after a restart, taking out again a cable decided within
        the hour), so the hourly rate cannot refuse it; capacity and the blast radius still can."""
        if cable in self.disabled:
            return Verdict(True, None, "already disabled by automation: nothing changes")
        self._forget_before(now - RATE_WINDOW)
        figures: dict[str, Any] = {
            "c": self.settings.c, "disabled": len(self.disabled), "cap": self.cap,
            "disables_last_hour": len(self.recent), "hourly_limit": self.settings.hourly_limit,
        }
        if not self.guards(cable):
            # A host link (when policy lets automation disable them): no path to core depends on it, but a GPU
            # node loses a rail, so it counts against the blast radius and the hourly rate like any other.
            return self._limits(figures, rate_counted) or Verdict(
                True, None, "not a switch-switch cable: no path to core depends on it", figures)
        if cable in self.out:
            # Down already (UFM shows it so): no path is lost, but disabling it still counts against the blast
            # radius and the hourly rate like any other disable (``take_out`` adds it to both).
            return self._limits(figures, rate_counted) or Verdict(
                True, None, "already out of service: capacity unchanged", figures)
        _, deltas = self._effect(cable, -1)
        worst = min(deltas, key=lambda leaf: (self.paths[leaf] + deltas[leaf] - self.minimum[leaf], leaf))
        after = self.paths[worst] + deltas[worst]
        figures |= {
            "affected_leaves": len(deltas), "worst_leaf": self.names.get(worst, worst),
            "worst_leaf_paths": self.paths[worst], "worst_leaf_paths_after": after,
            "worst_leaf_minimum": self.minimum[worst], "worst_leaf_planned": self.planned[worst],
        }
        if after < self.minimum[worst]:
            return Verdict(False, "capacity", (
                f"{figures['worst_leaf']} would keep {after} of {self.planned[worst]} planned paths to core, "
                f"below the guard's {self.minimum[worst]} (c = {self.settings.c:g})"), figures)
        return self._limits(figures, rate_counted) or Verdict(True, None, (
            f"every affected leaf keeps at least its guard ({figures['worst_leaf']}: {after} paths, "
            f"minimum {self.minimum[worst]})"), figures)

    def _limits(self, figures: dict[str, Any], rate_counted: bool) -> Verdict | None:
        """The refusal of one more disable by the blast-radius cap or the hourly rate, if either is reached."""
        if len(self.disabled) >= self.cap:
            return Verdict(False, "blast_radius", (
                f"{len(self.disabled)} cables already disabled by automation, the cap is {self.cap}"), figures)
        if not rate_counted and len(self.recent) >= self.settings.hourly_limit:
            return Verdict(False, "rate", (
                f"{len(self.recent)} disables in the last hour, the limit is {self.settings.hourly_limit}"),
                figures)
        return None

    def _forget_before(self, cutoff: datetime) -> None:
        while self.recent and self.recent[0] <= cutoff:
            self.recent.popleft()

    def disables_within_hour(self, now: datetime) -> int:
        """The disables of the sliding hour at ``now``: with ``generation``, all a verdict at ``now`` depends on."""
        self._forget_before(now - RATE_WINDOW)
        return len(self.recent)

    # --- state changes -------------------------------------------------------------------------------

    def mark_down(self, cable: CableKey) -> None:
        """A cable stopped carrying traffic (UFM shows it down, or we disabled it)."""
        if not self.guards(cable) or cable in self.out:
            return
        self._apply(cable, -1)
        self.out.add(cable)
        self._changed()

    def mark_up(self, cable: CableKey) -> None:
        if cable not in self.out:
            return
        self._apply(cable, +1)
        self.out.discard(cable)
        self._changed()

    def take_out(self, cable: CableKey, now: datetime) -> None:
        """Automation disabled ``cable``: counts against capacity (a switch-switch cable), the blast radius and the
        rate (any cable)."""
        self.mark_down(cable)
        if cable not in self.disabled:
            self.disabled.add(cable)
            self.recent.append(now)
            self._changed()

    def restore(self, cable: CableKey) -> None:
        """After a restart: a cable automation already holds out counts against capacity and the blast radius; the
        hourly rate counted it when it was decided (``remember_disables``)."""
        self.mark_down(cable)
        if cable not in self.disabled:
            self.disabled.add(cable)
            self._changed()

    def remember_disables(self, times: Iterable[datetime]) -> None:
        """After a restart: the disables decided before it (the decision log's), for the sliding hour."""
        self.recent = deque(sorted([*self.recent, *times]))

    def carry_over(self, before: CapacityGuard) -> None:
        """Count what ``before`` counts (a guard of the same plan under other settings, replaced by this one while
        the service runs): the cables out, those automation holds out, the disables of the sliding hour."""
        for cable in before.out:
            self.mark_down(cable)
        self.disabled |= before.disabled
        self.recent = deque(before.recent)
        self._changed()

    def put_back(self, cable: CableKey) -> None:
        if cable in self.disabled:
            self.disabled.discard(cable)
            self._changed()
        self.mark_up(cable)

    def _apply(self, cable: CableKey, sign: int) -> None:
        lower, upper = self.orientation[cable]
        change = sign * self.paths[upper]
        self.up[lower][upper] += sign
        self.down[upper][lower] += sign
        self._shift(lower, change)

    def _shift(self, node: str, change: int) -> None:
        self.paths[node] += change
        for lower, count in self.down[node].items():
            self._shift(lower, count * change)
