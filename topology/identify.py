"""Name every switch of a fresh fabric from the hosts it serves: an anchored match of the as-built graph onto the plan.

A fabric that has just come up knows one thing for sure: each host adapter's node description carries its host's
name and the adapter (``pod03-host07 mlx5_2``), which the plan also has. Its switches carry factory names. So the
adapters are the anchors, and a switch is named from the named devices its cables reach:

* a cable from port ``p`` of switch ``S`` to port ``q`` of a device the match has named ``n`` is *exact* evidence
  for the planned switch ``Y`` that the plan cables from its port ``p`` to ``n``'s port ``q``; it is *near*
  evidence for every planned switch the plan cables to ``n`` at all. A candidate's fit is (exact, near), compared
  in that order: port numbers are what separate the cores of one group, which the plan cables to the same spines;
* leaves are named from the adapters (and so the rails) they serve, spines from the named leaves, cores from the
  named spines: each newly named switch makes its neighbours' evidence richer, and their fits are computed again
  until no name changes;
* a switch is ``unique`` when one candidate fits strictly better than every other, with at least two cables
  landing exactly as planned, and no other switch claims that candidate as well or better; ``ambiguous`` when
  candidates tie (with the ports whose cabling would tell them apart); ``unmatched`` when nothing names it.

A cable miswired or missing costs its switch one piece of evidence out of dozens, so a few of them do not change a
name. Plain dictionaries and counters: a graph library's isomorphism search would look for a whole-graph match that
a fabric with one miswire does not have, and costs far more.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from topology.model import Cable, End, Fabric
from topology.numerals import whole_number
from topology.ports import Kind

MIN_EXACT = 2
"""Cables that must land exactly as planned before a switch is named: one could be the one miswired cable."""
SHOWN_CANDIDATES = 3
SHOWN_PORTS = 3
_ROUNDS = 50
"""More than any fat tree needs (a name travels one tier a round): a bound, not a tuning."""


class Confidence(StrEnum):
    UNIQUE = "unique"
    AMBIGUOUS = "ambiguous"
    UNMATCHED = "unmatched"


@dataclass(frozen=True, slots=True)
class Fit:
    """How well one planned switch explains one as-built switch's cables."""

    name: str
    """The planned switch's name."""
    exact: int
    """Cables that land as the plan cables the candidate: same port on it, same port on a named neighbour."""
    near: int
    """Cables to a named device the plan cables to the candidate at all (the exact ones included)."""

    @property
    def score(self) -> tuple[int, int]:
        return self.exact, self.near


@dataclass(frozen=True, slots=True)
class SwitchMatch:
    key: str
    name: str
    """The as-built name: the factory name, or the GUID."""
    guid: str | None
    confidence: Confidence
    planned: str | None
    """The planned name, for a ``unique`` match only."""
    candidates: tuple[Fit, ...]
    """The best fits, best first."""
    why: str
    """The evidence: what named it, what would separate the candidates, or why nothing names it."""

    def to_dict(self) -> dict[str, Any]:
        return {"guid": self.guid, "name": self.name, "planned": self.planned, "confidence": self.confidence.value,
                "why": self.why,
                "candidates": [{"name": f.name, "exact": f.exact, "near": f.near} for f in self.candidates]}


@dataclass(slots=True)
class Identification:
    switches: list[SwitchMatch]
    """Every as-built switch, in the as-built fabric's order."""
    not_found: list[str]
    """Planned switches no as-built switch was named."""
    anchors: int
    """Host adapters whose names the plan has."""
    strangers: list[str] = field(default_factory=list)
    """Host adapters whose names the plan does not have: no anchors."""

    def names(self) -> dict[str, str]:
        """As-built switch key -> planned name, for the ``unique`` matches."""
        return {m.key: m.planned for m in self.switches if m.planned is not None}

    def counts(self) -> dict[str, int]:
        tally = Counter(m.confidence.value for m in self.switches)
        return {c.value: tally.get(c.value, 0) for c in Confidence} | {
            "planned_not_found": len(self.not_found), "adapters_anchored": self.anchors,
            "adapters_not_in_plan": len(self.strangers)}


class _Evidence:
    """The plan's side of the evidence, and the current naming of the as-built devices."""

    def __init__(self, plan: Fabric, actual: Fabric) -> None:
        self.plan = plan
        self.plan_switches = {d.key for d in plan.switches()}
        self.cables = actual.adjacency()
        self.named: dict[str, str] = {}
        """As-built device key -> planned device key: the anchored adapters, then the switches named so far."""
        self.plan_cables = plan.adjacency()
        self._neighbours: dict[str, list[str]] = {}
        self._links: dict[str, list[tuple[str, str, str]]] = {}

    def planned_neighbours(self, key: str) -> list[str]:
        """The planned switches the plan cables to device ``key``, each once (built on first use)."""
        found = self._neighbours.get(key)
        if found is None:
            found = list(dict.fromkeys(far for cable in self.plan_cables.get(key, ())
                                       if (far := cable.other(_end_on(cable, key)).device) in self.plan_switches))
            self._neighbours[key] = found
        return found

    def links(self, switch: str) -> list[tuple[str, str, str]]:
        """``switch``'s cables as (its port, far device, far port): they do not change between rounds."""
        found = self._links.get(switch)
        if found is None:
            found = []
            for cable in self.cables.get(switch, ()):
                mine = _end_on(cable, switch)
                far = cable.other(mine)
                found.append((mine.port, far.device, far.port))
            self._links[switch] = found
        return found

    def fits(self, switch: str) -> list[Fit]:
        """The ``SHOWN_CANDIDATES`` planned switches with the most evidence for ``switch``, best first (ties in name
        order): all a verdict reads. A fat tree's core gives near evidence for a hundred spines; Fits for all of
        them were most of the time on h100-32k."""
        exact: Counter[str] = Counter()
        reached: Counter[str] = Counter()
        by_end = self.plan.by_end
        for port, far_device, far_port in self.links(switch):
            neighbour = self.named.get(far_device)
            if neighbour is None:
                continue
            reached[neighbour] += 1
            planned_end = End(neighbour, far_port)
            planned = by_end.get(planned_end)
            if planned is not None:
                other = planned.b if planned.a == planned_end else planned.a
                if other.port == port and other.device in self.plan_switches:
                    exact[other.device] += 1
        near: Counter[str] = Counter()
        for neighbour, count in reached.items():
            candidates = self.planned_neighbours(neighbour)
            for _ in range(count):
                near.update(candidates)  # counted in C
        best = heapq.nsmallest(SHOWN_CANDIDATES, near, key=lambda key: (-exact[key], -near[key], key))
        names = self.plan.devices
        return [Fit(names[key].name, exact[key], near[key]) for key in best]


def _end_on(cable: Cable, device: str) -> End:
    return cable.a if cable.a.device == device else cable.b


def identify(plan: Fabric, actual: Fabric) -> Identification:
    """Name the switches of ``actual`` after ``plan`` (see the module docstring)."""
    evidence = _Evidence(plan, actual)
    strangers: list[str] = []
    for key, device in actual.devices.items():
        if device.kind is Kind.ADAPTER:
            twin = plan.devices.get(key)
            if twin is not None and twin.kind is Kind.ADAPTER:
                evidence.named[key] = key
            else:
                strangers.append(device.name)
    anchors = len(evidence.named)
    switches = [d.key for d in actual.switches()]
    fits, verdicts = _converge(plan, evidence, switches)
    matches = []
    for key in switches:
        device = actual.devices[key]
        confidence, planned, why = verdicts[key]
        matches.append(SwitchMatch(key, device.name, device.guid, confidence, planned,
                                   tuple(fits[key]), why))
    taken = {m.planned.casefold() for m in matches if m.planned}
    not_found = [d.name for d in plan.switches() if d.key not in taken]
    matches = [_with_why(m, _described(plan, evidence, m)) if m.confidence is Confidence.AMBIGUOUS else m
               for m in matches]
    return Identification(matches, not_found, anchors, strangers)


def _converge(plan: Fabric, evidence: _Evidence, switches: list[str]
              ) -> tuple[dict[str, list[Fit]], dict[str, tuple[Confidence, str | None, str]]]:
    """Fits and verdicts computed again, for the switches whose evidence changed, until no name changes."""
    fits: dict[str, list[Fit]] = {}
    dirty: Iterable[str] = switches
    verdicts: dict[str, tuple[Confidence, str | None, str]] = {}
    for _ in range(_ROUNDS):
        for switch in dirty:
            fits[switch] = evidence.fits(switch)
        verdicts = _verdicts(fits)
        assigned = {key: plan.devices[name.casefold()].key for key, (_, name, _) in verdicts.items() if name}
        changed = {key for key in switches if evidence.named.get(key) != assigned.get(key)}
        if not changed:
            break
        for key in changed:
            if key in assigned:
                evidence.named[key] = assigned[key]
            else:
                evidence.named.pop(key, None)
        # Only the neighbours of a switch whose name changed have new evidence.
        dirty = {c.other(_end_on(c, k)).device for k in changed for c in evidence.cables.get(k, ())} & set(switches)
    return fits, verdicts


def _with_why(match: SwitchMatch, why: str) -> SwitchMatch:
    return SwitchMatch(match.key, match.name, match.guid, match.confidence, match.planned, match.candidates, why)


def _verdicts(fits: dict[str, list[Fit]]) -> dict[str, tuple[Confidence, str | None, str]]:
    """Each switch's confidence, planned name and why, the names one to one (see the module docstring)."""
    verdicts: dict[str, tuple[Confidence, str | None, str]] = {}
    claims: dict[str, list[str]] = defaultdict(list)
    for key, ranked in fits.items():
        if not ranked:
            verdicts[key] = (Confidence.UNMATCHED, None, "no cable reaches a host adapter of the plan or a named "
                                                         "switch")
            continue
        best = ranked[0]
        if len(ranked) > 1 and ranked[1].score == best.score:
            verdicts[key] = (Confidence.AMBIGUOUS, None, "")  # the evidence that would separate them: _described
        elif best.exact < MIN_EXACT:
            verdicts[key] = (Confidence.AMBIGUOUS if best.exact else Confidence.UNMATCHED, None,
                             f"too little evidence: {best.exact} cable(s) land as planned for {best.name}")
        else:
            claims[best.name].append(key)
    for name, claimants in claims.items():
        claimants.sort(key=lambda k: fits[k][0].score, reverse=True)
        winner = fits[claimants[0]][0]
        contested = len(claimants) > 1 and fits[claimants[1]][0].score == winner.score
        for rank, key in enumerate(claimants):
            fit = fits[key][0]
            runner_up = fits[key][1] if len(fits[key]) > 1 else None
            if rank == 0 and not contested:
                verdicts[key] = (Confidence.UNIQUE, name, _named_why(fit, runner_up))
            elif contested and fit.score == winner.score:
                verdicts[key] = (Confidence.AMBIGUOUS, None,
                                 f"fits {name} as well as {len(claimants) - 1} other switch(es) do "
                                 f"({fit.exact} exact, {fit.near} near)")
            else:
                verdicts[key] = (Confidence.AMBIGUOUS, None,
                                 f"its best fit {name} ({fit.exact} exact) is taken by a switch that fits it better "
                                 f"({winner.exact} exact)")
    return verdicts


def _named_why(fit: Fit, runner_up: Fit | None) -> str:
    against = f"; next {runner_up.name}: {runner_up.exact} exact" if runner_up else ""
    return f"{fit.exact} exact, {fit.near} near{against}"


def _described(plan: Fabric, evidence: _Evidence, match: SwitchMatch) -> str:
    """Why ``match`` is ambiguous, and the ports whose cables would tell its two best candidates apart."""
    if len(match.candidates) < 2 or match.candidates[0].score != match.candidates[1].score:
        return match.why
    first, second = (plan.devices[f.name.casefold()].key for f in match.candidates[:2])
    tied = f"{match.candidates[0].name} and {match.candidates[1].name} fit alike " \
           f"({match.candidates[0].exact} exact, {match.candidates[0].near} near)"
    ports = {_end_on(cable, key).port for key in (first, second) for cable in evidence.plan_cables.get(key, ())}
    separating = []
    for port in sorted(ports, key=_port_order):
        one, other = (_planned_far(plan, End(key, port)) for key in (first, second))
        if one != other:
            separating.append(f"{port} ({one or 'nothing'} / {other or 'nothing'})")
        if len(separating) == SHOWN_PORTS:
            break
    if not separating:
        return f"{tied}; the plan cables them alike: only a label or the rack position tells them apart"
    return f"{tied}; a named device on port " + ", ".join(separating) + " would separate them"


def _planned_far(plan: Fabric, end: End) -> str | None:
    cable = plan.by_end.get(end)
    return plan.describe(cable.other(end)) if cable is not None else None


def _port_order(port: str) -> tuple[int, str]:
    """Numbered ports in number order, then labelled ones (a director's ``Blade 1_Port 1/1``) in text order."""
    number = whole_number(port)
    return (number, "") if number is not None else (1 << 62, port)
