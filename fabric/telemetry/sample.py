"""One telemetry sample, columnar: a row per port, an array per counter."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from fabric.telemetry.columns import Counter

__all__ = ["Sample", "instant"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def instant(microseconds: int) -> datetime:
    """A telemetry timestamp (microseconds since the epoch) as an aware UTC time."""
    return _EPOCH + timedelta(microseconds=microseconds)


@dataclass(frozen=True, slots=True, eq=False)
class Sample:
    """A parsed sample: row ``i`` is port ``ports[i]``, its counters ``counters[c][i]``."""

    source: str
    """Where it was read (a URL or a file), as errors name it."""
    time_us: int
    """The sample's time: its newest row's timestamp. UFM reads the switches one after another, so the rows of
    one sample carry timestamps a little apart; each row's own is kept (``row_time_us``) to tell a port read
    anew from one whose row was served again, and the newest dates the sample."""
    newest_line: int
    """The line of the row that dates it, for an error about the sample's time."""
    guids: npt.NDArray[np.uint64]
    """The distinct node GUIDs of the rows, as numbers, sorted."""
    guid_index: npt.NDArray[np.intp]
    """Row ``i`` is port ``port_numbers[i]`` of the node ``guids[guid_index[i]]``."""
    port_numbers: npt.NDArray[np.uint16]
    row_time_us: npt.NDArray[np.int64]
    counters: Mapping[Counter, npt.NDArray[np.uint64]]
    temperature: npt.NDArray[np.float64]
    """°C; NaN where the port has no reading."""

    def __len__(self) -> int:
        return len(self.row_time_us)

    @property
    def time(self) -> datetime:
        return instant(self.time_us)

    def port_names(self) -> list[str]:
        """UFM's REST names of the rows' ports, ``<16 hex guid>_<n>``, in row order."""
        guids = [f"{guid:016x}" for guid in self.guids.tolist()]
        return [f"{guids[index]}_{number}" for index, number in zip(self.guid_index.tolist(),
                                                                    self.port_numbers.tolist(), strict=True)]

    def received_packets(self) -> dict[str, int]:
        """Each row's port (``port_names``) and its received packets (``PortRcvPktsExtended``): what a burn-in
        window compares between its first and last samples to tell a port that carried no traffic."""
        return dict(zip(self.port_names(), self.counters[Counter.RCV_PACKETS].tolist(), strict=True))
