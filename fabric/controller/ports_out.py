"""The ports UFM shows out of service, and how: what recovery, the guard's count and reconciliation read.

A port is out by either method whatever ``[ufm] method`` says today: disabled (``physical_state`` Disabled, from
``/resources/ports``), or isolated (named by an entry of ``/app/unhealthy_ports`` that a ``PUT`` made, condition
``MANUAL``). A port a run took out by the other method, before the method was changed, is thus still known as
out; it is put back the way it was taken out (``writes.PortWrites.method_for``).

An entry of another condition is OpenSM's own health policy, whose action the entry does not say: its cable counts
as down in the guard (it may carry no traffic), but it is no port write of anyone's to converge or undo; UFM raises
702 for it, which the detectors judge. An entry names both ends of its cable (``UnhealthyPort.ports``), so its
cable is out whichever side UFM names the port marked on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from fabric.ufm.client import PortActionMethod
from fabric.ufm.models import UnhealthyPort


@dataclass(frozen=True, slots=True)
class Listing:
    """One entry of ``/app/unhealthy_ports`` as the engine keeps it."""

    ports: frozenset[str]
    """Both ends the entry names."""
    manual: bool
    """Marked by a ``PUT`` (an isolation, an operator's or automation's), not by OpenSM's health policy."""


def listings(entries: Iterable[UnhealthyPort]) -> frozenset[Listing]:
    return frozenset(Listing(entry.ports, entry.manual) for entry in entries if entry.ports)


class PortsOut:
    """The ports UFM shows out of service as of the last reading, kept in step with automation's own writes as they
    are settled (``note_disabled``, ``note_listed``)."""

    def __init__(self, disabled: Iterable[str] = (), listed: Iterable[Listing] = ()) -> None:
        self.disabled: set[str] = set(disabled)
        self._listed: set[Listing] = set(listed)
        self._index()

    def _index(self) -> None:
        self.isolated: frozenset[str] = frozenset(p for entry in self._listed if entry.manual for p in entry.ports)
        """Ports UFM shows isolated: named by an entry a ``PUT`` made."""
        self.unhealthy: frozenset[str] = frozenset(p for entry in self._listed for p in entry.ports)
        """Ports named by any entry, OpenSM's own included: their cables count as down."""

    @property
    def listed(self) -> frozenset[Listing]:
        return frozenset(self._listed)

    def __contains__(self, port: object) -> bool:
        return port in self.disabled or port in self.isolated

    def __iter__(self) -> Iterator[str]:
        """Every port out (disabled or isolated), in name order."""
        return iter(sorted(self.disabled | self.isolated))

    def shows(self, port: str, method: PortActionMethod) -> bool:
        """UFM shows ``port`` out by ``method``."""
        return port in (self.disabled if method is PortActionMethod.DISABLE else self.isolated)

    def describe(self, port: str) -> str:
        """How UFM shows ``port``, for a decision's reason."""
        ways = [way for way, shown in (("disabled", port in self.disabled), ("isolated", port in self.isolated))
                if shown]
        return " and ".join(ways) or "in service"

    def note_disabled(self, port: str, disabled: bool) -> None:
        """``port`` as a read of it showed it."""
        (self.disabled.add if disabled else self.disabled.discard)(port)

    def note_listed(self, port: str, listed: Iterable[Listing]) -> None:
        """The entries naming ``port`` as a read of the whole list (``listed``) showed them, the others as they were:
        a change someone else made meanwhile is left for the next reading to find (and the guard to count)."""
        fresh = {entry for entry in listed if port in entry.ports}
        self._listed = {entry for entry in self._listed if port not in entry.ports} | fresh
        self._index()
