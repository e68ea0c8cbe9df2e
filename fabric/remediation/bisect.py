"""Which hosts of failing runs are to blame, and how to split them next: group testing over job runs.

A run is a set of hosts and whether it failed. The model: up to ``culprits`` hosts are bad, and a run fails when
it holds at least one of them; with ``noise``, up to that many runs' outcomes may be wrong (a flaky job, a failure
of something else). An explanation is a set of one to ``culprits`` hosts that contradicts at most ``noise`` runs;
the suspects are the hosts of some explanation. The split proposed next partitions the suspects into groups to run
at once, chosen so that the expected number of suspects left after its outcomes is smallest (each explanation
taken as likely as another, the new runs' outcomes as the explanation predicts them).

The published story is the simplest case: 48 hosts in 6 groups of 8, one group fails; then 8 groups of 6, each
holding at most one host of the failing group: the host in a failing group both times is the culprit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb

MAX_EXPLANATIONS = 200_000
"""The most explanations weighed: past it the runs say too little for the culprits asked (one line, exit 2)."""


@dataclass(frozen=True, slots=True)
class Run:
    hosts: frozenset[str]
    failed: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    explanations: tuple[frozenset[str], ...]
    """Every set of hosts consistent with the runs, smallest first."""
    suspects: tuple[str, ...]
    """The hosts of some explanation, most often blamed first."""
    cleared: tuple[str, ...]
    """The hosts run that no explanation blames."""
    share: Mapping[str, float]
    """Each suspect: the share of the explanations that blame it."""

    @property
    def settled(self) -> bool:
        """One explanation is left: its hosts are the culprits."""
        return len(self.explanations) == 1


class TooManyExplanations(ValueError):
    """The runs leave more explanations than ``MAX_EXPLANATIONS``."""


def explain(runs: Sequence[Run], culprits: int = 1, noise: int = 0) -> Verdict:
    """The explanations of ``runs`` with one to ``culprits`` bad hosts and at most ``noise`` wrong outcomes."""
    hosts = sorted(set().union(*(run.hosts for run in runs)))
    # a host in more passing runs than the noise allows cannot be bad in any explanation
    passes = dict.fromkeys(hosts, 0)
    for run in runs:
        if not run.failed:
            for host in run.hosts:
                passes[host] += 1
    pool = [host for host in hosts if passes[host] <= noise]
    weighed = sum(comb(len(pool), size) for size in range(1, culprits + 1))
    if weighed > MAX_EXPLANATIONS:
        raise TooManyExplanations(f"{weighed} sets of up to {culprits} of {len(pool)} hosts to weigh (at most "
                                  f"{MAX_EXPLANATIONS}): give fewer culprits, less noise or more runs")
    found = [frozenset(blamed) for size in range(1, culprits + 1) for blamed in combinations(pool, size)
             if _contradicted(blamed, runs) <= noise]
    counts: dict[str, int] = {}
    for blamed in found:
        for host in blamed:
            counts[host] = counts.get(host, 0) + 1
    suspects = tuple(sorted(counts, key=lambda host: (-counts[host], host)))
    return Verdict(tuple(found), suspects, tuple(host for host in hosts if host not in counts),
                   {host: counts[host] / len(found) for host in suspects})


def _contradicted(blamed: Sequence[str], runs: Sequence[Run]) -> int:
    return sum(1 for run in runs if run.failed != any(host in run.hosts for host in blamed))


def expected_suspects(explanations: Sequence[frozenset[str]], groups: Sequence[Sequence[str]]) -> float:
    """The suspects expected after running ``groups``: explanations predicting the same outcomes stay together,
    and each such class leaves the hosts of its explanations, weighted by its share."""
    if not explanations:
        return 0.0
    classes: dict[tuple[bool, ...], set[str]] = {}
    sizes: dict[tuple[bool, ...], int] = {}
    for blamed in explanations:
        outcome = tuple(not blamed.isdisjoint(group) for group in groups)
        classes.setdefault(outcome, set()).update(blamed)
        sizes[outcome] = sizes.get(outcome, 0) + 1
    return sum(sizes[outcome] * len(left) for outcome, left in classes.items()) / len(explanations)


def propose(verdict: Verdict, groups: int, size: int | None = None,
            leaves: Mapping[str, frozenset[str]] | None = None) -> list[list[str]]:
    """The next split: the suspects spread over ``groups`` groups (each topped up with cleared hosts to ``size``
    when given), so that the expected suspects left is smallest. With ``leaves`` (each host's leaf switches),
    a group takes a host that shares no leaf with its others where the choice is otherwise even. An unsettled
    verdict's split always leaves fewer suspects expected than there are now (two groups at least, however few
    were asked for: one group's outcome tells nothing)."""
    suspects = list(verdict.suspects)
    count = max(1, min(groups, len(suspects))) if suspects else max(1, groups)
    split: list[list[str]] = [[] for _ in range(count)]
    classes = _Classes(verdict.explanations)
    # each suspect, most blamed first, to the group that keeps the explanations' classes smallest, then the
    # emptier group, then the one sharing no leaf with it
    for host in suspects:
        at = min(range(count), key=lambda at: (classes.after(host, at), len(split[at]),
                                               _shared(leaves, split[at], host), at))
        classes.place(host, at)
        split[at].append(host)
    if not verdict.settled and suspects and expected_suspects(verdict.explanations, split) >= len(suspects):
        split = _one_apart(verdict, count)
    if size is not None:
        _top_up(split, list(verdict.cleared), size, leaves)
    return split


class _Classes:
    """The explanations grouped by the outcomes a split so far predicts (a bit a group: it fails), kept as hosts
    are placed, so that trying a host in a group costs the explanations that blame it, not all of them: ``after``
    is ``expected_suspects`` of the split with the host placed, times the number of explanations."""

    def __init__(self, explanations: Sequence[frozenset[str]]) -> None:
        self._explanations = explanations
        self._outcome = [0] * len(explanations)
        self._blaming: dict[str, list[int]] = {}
        everyone: dict[str, int] = {}
        for index, blamed in enumerate(explanations):
            for host in blamed:
                self._blaming.setdefault(host, []).append(index)
                everyone[host] = everyone.get(host, 0) + 1
        # outcome -> (explanations predicting it, how many of them blame each host)
        self._classes: dict[int, tuple[int, dict[str, int]]] = {0: (len(explanations), everyone)} if explanations \
            else {}
        self.value = sum(count * len(hosts) for count, hosts in self._classes.values())

    def _moves(self, host: str, group: int) -> dict[int, tuple[int, dict[str, int]]]:
        """Each class the placing changes: how many explanations it gains (or loses) and each host's change."""
        bit = 1 << group
        moves: dict[int, tuple[int, dict[str, int]]] = {}
        for index in self._blaming.get(host, ()):
            before = self._outcome[index]
            if before & bit:
                continue
            for outcome, sign in ((before, -1), (before | bit, 1)):
                count, hosts = moves.get(outcome, (0, {}))
                for blamed in self._explanations[index]:
                    hosts[blamed] = hosts.get(blamed, 0) + sign
                moves[outcome] = (count + sign, hosts)
        return moves

    def after(self, host: str, group: int) -> int:
        value = self.value
        for outcome, (change, hosts) in self._moves(host, group).items():
            count, blamed = self._classes.get(outcome, (0, {}))
            distinct = len(blamed) + sum((blamed.get(h, 0) + d > 0) - (h in blamed) for h, d in hosts.items())
            value += (count + change) * distinct - count * len(blamed)
        return value

    def place(self, host: str, group: int) -> None:
        self.value = self.after(host, group)
        for outcome, (change, hosts) in self._moves(host, group).items():
            count, blamed = self._classes.get(outcome, (0, {}))
            for h, d in hosts.items():
                if blamed.get(h, 0) + d:
                    blamed[h] = blamed.get(h, 0) + d
                else:
                    blamed.pop(h, None)
            if count + change:
                self._classes[outcome] = (count + change, blamed)
            else:
                self._classes.pop(outcome, None)
        bit = 1 << group
        for index in self._blaming.get(host, ()):
            self._outcome[index] |= bit


def _shared(leaves: Mapping[str, frozenset[str]] | None, group: Sequence[str], host: str) -> int:
    if leaves is None:
        return 0
    mine = leaves.get(host, frozenset())
    return sum(1 for other in group if not mine.isdisjoint(leaves.get(other, frozenset())))


def _one_apart(verdict: Verdict, count: int) -> list[list[str]]:
    """A host some explanation leaves out, alone in a group, the rest in the others: its outcome tells the
    explanations without it from those with it, which always leaves fewer suspects expected."""
    apart = next(host for host in verdict.suspects if any(host not in blamed for blamed in verdict.explanations))
    rest = [host for host in verdict.suspects if host != apart]
    split: list[list[str]] = [[apart]] + [[] for _ in range(max(1, count - 1))]
    for index, host in enumerate(rest):
        split[1 + index % (len(split) - 1)].append(host)
    return [group for group in split if group]


def _top_up(split: list[list[str]], cleared: list[str], size: int,
            leaves: Mapping[str, frozenset[str]] | None) -> None:
    """Cleared hosts added to each group short of ``size`` (a job needs its hosts), sharing no leaf with the
    group where one is left that does not."""
    for group in split:
        while len(group) < size and cleared:
            pick = min(range(len(cleared)), key=lambda at: (_shared(leaves, group, cleared[at]), at))
            group.append(cleared.pop(pick))
