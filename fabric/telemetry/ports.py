"""The ports a window watches, found in a sample by number, not by name.

The watched ports are the plan's (as UFM names them, ``<guid>_<n>``), fixed when the window is made, so the
window's arrays have one slot per planned port whatever a sample holds: a row of a port not watched is counted
and ignored, and a feed that lists junk ports cannot grow the window's memory. A sample's rows are placed by
their (GUID, port number) as integers, sorted and searched in arrays: no text is compared per row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from fabric.telemetry.sample import Sample
from fabric.ufm.objects import PortEnd

__all__ = ["Placement", "PortIndex"]

_PORT_BITS = np.uint64(16)
_UNKNOWN = -1


class Placement:
    """Where a sample's rows land: ``rows[k]`` of the sample is watched port ``slots[k]``."""

    __slots__ = ("rows", "slots", "unknown")

    def __init__(self, rows: npt.NDArray[np.intp], slots: npt.NDArray[np.intp], unknown: int) -> None:
        self.rows = rows
        self.slots = slots
        self.unknown = unknown
        """Rows of ports not watched."""


class PortIndex:
    """The watched ports, in the order given: slot ``i`` is ``names[i]``."""

    def __init__(self, names: Sequence[str]) -> None:
        ends = []
        canonical = []
        for name in names:
            try:
                end = PortEnd.parse(name)
            except ValueError as exc:
                raise ValueError(f"watched ports: {exc}") from None
            ends.append(end)
            canonical.append(name if name == end.name else end.name)  # the caller's string, when already UFM's
        self.names: tuple[str, ...] = tuple(canonical)
        if not self.names:
            raise ValueError("watched ports: none given")
        if len(set(self.names)) != len(self.names):
            raise ValueError("watched ports: a port named twice")
        guid_values = np.array([int(end.guid, 16) for end in ends], dtype=np.uint64)
        self._guids, guid_index = np.unique(guid_values, return_inverse=True)
        keys = guid_index.astype(np.uint64) << _PORT_BITS | np.array([end.port for end in ends], dtype=np.uint64)
        self._order = np.argsort(keys)
        self._keys = keys[self._order]
        self._slot_of = {name: slot for slot, name in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.names)

    def slot(self, name: str) -> int:
        """The slot of a port by name (UFM's form or any ``PortEnd`` reads); ``KeyError`` when not watched."""
        found = self._slot_of.get(name)
        return found if found is not None else self._slot_of[PortEnd.parse(name).name]

    def place(self, sample: Sample) -> Placement:
        """Which watched port each of ``sample``'s rows is, rows of other ports left out."""
        guid_at = np.minimum(np.searchsorted(self._guids, sample.guids), len(self._guids) - 1)
        guid_slot = np.where(self._guids[guid_at] == sample.guids, guid_at, _UNKNOWN)[sample.guid_index]
        rows = np.flatnonzero(guid_slot != _UNKNOWN)
        keys = guid_slot[rows].astype(np.uint64) << _PORT_BITS | sample.port_numbers[rows].astype(np.uint64)
        at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        found = self._keys[at] == keys
        rows = rows[found]
        return Placement(rows, self._order[at[found]], len(sample) - len(rows))

    def rates(self, rates: npt.ArrayLike | Mapping[str, float]) -> npt.NDArray[np.float64]:
        """Bits per second per slot, from an array in slot order or a mapping by port name (a port not in it: 0,
        no BER judged)."""
        if isinstance(rates, Mapping):
            by_slot = np.zeros(len(self), dtype=np.float64)
            for name, rate in rates.items():
                by_slot[self.slot(name)] = rate
        else:
            by_slot = np.array(rates, dtype=np.float64)
            if by_slot.shape != (len(self),):
                raise ValueError(f"rates: {by_slot.shape[0] if by_slot.ndim else 1} values for {len(self)} ports")
        if not np.isfinite(by_slot).all() or (by_slot < 0).any():
            raise ValueError("rates: every port's rate must be a finite number of bits per second, 0 or more")
        return by_slot

    def pairs(self, cables: Iterable[tuple[str, str]]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """The slots of both ends of each cable, as two arrays."""
        a_ends: list[int] = []
        b_ends: list[int] = []
        for a, b in cables:
            try:
                a_ends.append(self.slot(a))
                b_ends.append(self.slot(b))
            except (KeyError, ValueError):
                raise ValueError(f"cable {a} - {b}: an end that is not a watched port") from None
        return np.array(a_ends, dtype=np.intp), np.array(b_ends, dtype=np.intp)
