"""The ports a window watches, found in a sample by number, not by name.

The watched ports are the plan's (as UFM names them, ``<guid>_<n>``), fixed when the window is made, so the
window's arrays have one slot per planned port whatever a sample holds: a row of a port not watched is counted
and ignored, and a feed that lists junk ports cannot grow the window's memory. A sample's rows are placed by
their (GUID, port number) as integers, sorted and searched in arrays: no text is compared per row.

The watched names are read the same way, a column at a time: h100-32k watches 196,608 ports, and reading each
name into a ``PortEnd`` took most of the window's making (the first poll after a start, or once the fabric's
ports change; ``benchmarks/bench_telemetry.py``). Names already in UFM's form, as the engine's view gives them,
are read as one array of code points; only others (``0x``, upper case, spaces, a leading zero) go through
``PortEnd.parse``, which also words the refusal of a name that is no port name. No ``PortEnd`` is kept per port.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from fabric.telemetry.sample import Sample
from fabric.ufm.objects import PortEnd

__all__ = ["Placement", "PortIndex"]

_PORT_BITS = np.uint64(16)
_PORTS = 1 << 16
"""Port numbers a sample can hold (``parse``), the bits a port number takes in a key."""
_UNKNOWN = -1
_GUID_DIGITS = 16
_PORT_DIGITS = 5
_WIDTH = _GUID_DIGITS + 1 + _PORT_DIGITS
"""The longest name in UFM's form: 16 hex digits, ``_``, a port number below 65,536."""
_NOT_HEX = 16
_NIBBLE = np.full(128, _NOT_HEX, dtype=np.uint8)
_NIBBLE[[ord(digit) for digit in "0123456789abcdef"]] = np.arange(16, dtype=np.uint8)
"""The value of each lower-case hex digit by its code point, ``_NOT_HEX`` for every other ASCII character."""


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
        if not names:
            raise ValueError("watched ports: none given")
        guids, numbers, in_form = _read_names(names)
        if in_form.all():
            self.names: tuple[str, ...] = tuple(names)  # the caller's strings, already UFM's
        else:
            canonical = list(names)
            for row in np.flatnonzero(~in_form).tolist():
                try:
                    end = _port_end(canonical[row])
                except ValueError as exc:
                    raise ValueError(f"watched ports: {exc}") from None
                guids[row], numbers[row], canonical[row] = int(end.guid, 16), end.port, end.name
            self.names = tuple(canonical)
        self._guids, guid_index = np.unique(guids, return_inverse=True)
        keys = guid_index.astype(np.uint64) << _PORT_BITS | numbers
        self._order = np.argsort(keys)
        self._keys = keys[self._order]
        if (self._keys[1:] == self._keys[:-1]).any():
            raise ValueError("watched ports: a port named twice")

    def __len__(self) -> int:
        return len(self.names)

    def place(self, sample: Sample) -> Placement:
        """Which watched port each of ``sample``'s rows is, rows of other ports left out."""
        slots = self._slots(self._guid_slots(sample.guids)[sample.guid_index], sample.port_numbers)
        rows = np.flatnonzero(slots != _UNKNOWN)
        return Placement(rows, slots[rows], len(sample) - len(rows))

    def rates(self, rates: npt.ArrayLike | Mapping[str, float]) -> npt.NDArray[np.float64]:
        """Bits per second per slot, from an array in slot order or a mapping by port name (a port not in it: 0,
        no BER judged)."""
        if isinstance(rates, Mapping):
            names = list(rates)
            slots = self.find(names)
            missing = np.flatnonzero(slots == _UNKNOWN)
            if len(missing):  # the first name that is no port name, or not watched, as a look-up by name says
                raise KeyError(PortEnd.parse(names[int(missing[0])]).name)
            by_slot = np.zeros(len(self), dtype=np.float64)
            by_slot[slots] = np.fromiter(rates.values(), dtype=np.float64, count=len(names))
        else:
            by_slot = np.array(rates, dtype=np.float64)
            if by_slot.shape != (len(self),):
                raise ValueError(f"rates: {by_slot.shape[0] if by_slot.ndim else 1} values for {len(self)} ports")
        if not np.isfinite(by_slot).all() or (by_slot < 0).any():
            raise ValueError("rates: every port's rate must be a finite number of bits per second, 0 or more")
        return by_slot

    def pairs(self, cables: Iterable[tuple[str, str]]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """The slots of both ends of each cable, as two arrays."""
        listed = list(cables)
        ends = self.find([a for a, _ in listed] + [b for _, b in listed])
        a_ends, b_ends = ends[:len(listed)], ends[len(listed):]
        unknown = np.flatnonzero((a_ends == _UNKNOWN) | (b_ends == _UNKNOWN))
        if len(unknown):
            a, b = listed[int(unknown[0])]
            raise ValueError(f"cable {a} - {b}: an end that is not a watched port")
        return a_ends, b_ends

    def find(self, names: Sequence[str]) -> npt.NDArray[np.intp]:
        """The slot of each port named (UFM's form or any ``PortEnd`` reads), ``-1`` for a port not watched or a
        name that is no port name.

        A name as the index holds it is looked up in a dict of them made for the call (a cable's ends and the
        rates' keys are the very strings of the watched ports, whose hashes the strings keep: about twice as
        fast as reading them again on h100-32k); the rest are read as the index reads them."""
        slot_of = dict(zip(self.names, range(len(self.names)), strict=True))
        slots = np.array([slot_of.get(name, _UNKNOWN) for name in names], dtype=np.intp)
        rest = np.flatnonzero(slots == _UNKNOWN)
        if len(rest):
            slots[rest] = self._read_and_find([names[row] for row in rest.tolist()])
        return slots

    def _read_and_find(self, names: Sequence[str]) -> npt.NDArray[np.intp]:
        """``find`` of names not as the index holds them: read a column at a time, ``PortEnd.parse`` for the
        rest."""
        guids, numbers, in_form = _read_names(names)
        for row in np.flatnonzero(~in_form).tolist():
            try:
                end = _port_end(names[row])
            except ValueError:
                continue  # guid 0, port 0 when the slot is looked up: made unknown below
            guids[row], numbers[row], in_form[row] = int(end.guid, 16), end.port, True
        slots = self._slots(self._guid_slots(guids), numbers)
        slots[~in_form] = _UNKNOWN
        return slots

    def _guid_slots(self, guids: npt.NDArray[np.uint64]) -> npt.NDArray[np.intp]:
        """Each GUID's index among the watched ports' GUIDs, ``_UNKNOWN`` for a node none of them is on."""
        at = np.minimum(np.searchsorted(self._guids, guids), len(self._guids) - 1)
        return np.where(self._guids[at] == guids, at, _UNKNOWN)

    def _slots(self, guid_slots: npt.NDArray[np.intp], numbers: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
        """The slot of each port given by its GUID's index (``_guid_slots``) and number, ``_UNKNOWN`` if none."""
        keys = guid_slots.astype(np.uint64) << _PORT_BITS | numbers.astype(np.uint64)
        at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return np.where((guid_slots != _UNKNOWN) & (self._keys[at] == keys), self._order[at], _UNKNOWN)


def _port_end(name: str) -> PortEnd:
    """``name`` read by ``PortEnd.parse``, for a name not in UFM's form; ``ValueError`` also for a port number a
    sample cannot hold (it would not fit its bits of a key)."""
    end = PortEnd.parse(name)
    if end.port >= _PORTS:
        raise ValueError(f"port number past {_PORTS - 1}: {name!r}")
    return end


def _read_names(names: Sequence[str]) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Each name's GUID and port number, and whether the name is in UFM's form (16 lower-case hex digits, ``_``,
    the port number in decimal without a leading zero, below 65,536): read for all at once, as code points in
    one array, a row per name. A row not in that form is 0, 0: for the caller to read otherwise."""
    lengths = np.fromiter(map(len, names), dtype=np.intp, count=len(names))
    codes = np.array(names, dtype=f"<U{_WIDTH}").view(np.uint32).reshape(len(names), _WIDTH)  # longer names cut
    nibbles = _NIBBLE[np.minimum(codes[:, :_GUID_DIGITS], len(_NIBBLE) - 1)]
    in_form = ((lengths > _GUID_DIGITS + 1) & (lengths <= _WIDTH) & (codes[:, _GUID_DIGITS] == ord("_"))
               & (nibbles != _NOT_HEX).all(axis=1))
    guids = (nibbles[:, 0::2] << 4 | nibbles[:, 1::2]).view(">u8").ravel().astype(np.uint64)
    digits = codes[:, _GUID_DIGITS + 1:].astype(np.int64) - ord("0")
    numbers = np.zeros(len(names), dtype=np.int64)
    for place in range(_PORT_DIGITS):
        inside = place < lengths - (_GUID_DIGITS + 1)
        in_form &= ~inside | ((digits[:, place] >= 0) & (digits[:, place] <= 9))
        numbers = np.where(inside, numbers * 10 + digits[:, place], numbers)
    in_form &= ((digits[:, 0] != 0) | (lengths == _GUID_DIGITS + 2)) & (numbers < _PORTS)
    return np.where(in_form, guids, 0), np.where(in_form, numbers, 0).astype(np.uint64), in_form
