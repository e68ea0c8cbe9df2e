"""The reset ladder: a faulty link's port is reset before the link is taken out, as NVIDIA's PDR plugin does.

A reset retrains the link, which cures what a dirty connector, a marginal equalisation or a stuck state machine
causes, for a few seconds without the link instead of days out of service waiting for a technician. It is tried
only where it can help (the rule declares it, ``Rule.resettable``), at most ``max_resets`` times per link within
``window`` (PDR: 2 a week), and never twice in a row for one fault: after a reset the link is watched for
``settle``, and a fault found meanwhile takes it out. The policy (``fabric.remediation.policy``) climbs the ladder;
this module holds its settings and its count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from fabric.remediation.rules import RESETTABLE


@dataclass(frozen=True, slots=True)
class ResetLadder:
    """How many resets a faulty link gets before it is taken out (``[escalation]`` in the configuration)."""

    max_resets: int = 2
    """Resets of one link within ``window``; 0: never reset, take out at once."""
    window: timedelta = timedelta(days=7)
    settle: timedelta = timedelta(minutes=10)
    """How long a link is watched after its reset: a fault found meanwhile is one the reset did not cure."""
    rules: frozenset[str] = RESETTABLE
    """The rules whose findings reset first: the resettable ones (``RESETTABLE``) or fewer."""

    def __post_init__(self) -> None:
        if self.max_resets < 0:
            raise ValueError(f"ResetLadder.max_resets must be 0 or more, got {self.max_resets}")
        if self.window <= timedelta() or self.settle <= timedelta():
            raise ValueError("ResetLadder.window and ResetLadder.settle must be longer than zero")
        if not self.rules <= RESETTABLE:
            raise ValueError(f"a reset cannot cure what {', '.join(sorted(self.rules - RESETTABLE))} find: the "
                             f"rules a reset may answer are {', '.join(sorted(RESETTABLE))}")

    def resets(self, rule: str) -> bool:
        """A finding of ``rule`` is answered by a reset while the link has resets left."""
        return self.max_resets > 0 and rule in self.rules

    def within(self, resets: Iterable[datetime], now: datetime) -> tuple[datetime, ...]:
        """The resets of ``resets`` that count at ``now`` (within ``window``), oldest first."""
        return tuple(sorted(at for at in resets if now - at < self.window))
