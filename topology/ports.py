"""Port labels as wiring plans, UFM and ibnetdiscover spell them, reduced to one canonical form.

Switch ports: ``Port 21`` / ``21`` -> ``21``; ``Port 1/3/1`` / ``1/3/1`` (NDR cage/split labels) -> ``1/3/1``;
director-switch blades ``Blade 16_Port 2/20`` -> ``Blade 16_Port 2/20`` (whitespace, case and leading zeros
normalised). Host ends are adapters, named by their node description (``<host> mlx5_<k>`` or
``<host> <ifname>``), each with port ``1`` unless a port number is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    SWITCH = "switch"
    ADAPTER = "adapter"


_NUMERIC = re.compile(r"^(?:port\s*)?(\d+)$", re.IGNORECASE)
_SLASHED = re.compile(r"^(?:port\s*)?(\S+)/(\d+)/(\d+)$", re.IGNORECASE)
_BLADE = re.compile(r"^blade\s*(\d+)\s*_\s*port\s*(\d+)\s*/\s*(\d+)$", re.IGNORECASE)
# Interface-style names an adapter port goes by on a host: mlx5_3, ibp11s0f0, ib0, "IB Port 1", HCA-2/1.
_ADAPTER_PORT = re.compile(
    r"^(?:mlx\d+_\d+|ib\w*|ib port \d+|hca-\d+(?:/\d+)?|eth\w*|enp\w*)$", re.IGNORECASE
)
_HCA_PORT = re.compile(r"^(?:port\s*)?(?:hca-\d+/)?(\d+)$", re.IGNORECASE)

ADAPTER_PORT = "1"


def switch_port(text: str) -> str | None:
    """Canonical label of a switch port, or None when ``text`` is not one."""
    label = text.strip()
    if m := _NUMERIC.match(label):
        return str(int(m.group(1)))
    if m := _BLADE.match(label):
        return f"Blade {int(m.group(1))}_Port {int(m.group(2))}/{int(m.group(3))}"
    if m := _SLASHED.match(label):
        head = m.group(1)
        head = str(int(head)) if head.isdigit() else head.lower()
        return f"{head}/{int(m.group(2))}/{int(m.group(3))}"
    return None


def display_port(label: str) -> str:
    """How a canonical port label reads in a report: ``Port 21``, ``Port 1/3/1``, ``Blade 3_Port 1/2``."""
    return label if label.startswith("Blade ") else f"Port {label}"


def is_adapter_name(device: str) -> bool:
    """True for a node description of the form ``<host> <adapter>`` (``luna-0001 mlx5_10``)."""
    parts = device.split()
    return len(parts) >= 2 and bool(_ADAPTER_PORT.match(" ".join(parts[1:])))


def host_of(adapter: str) -> str:
    return adapter.split(maxsplit=1)[0]


@dataclass(frozen=True, slots=True)
class ParsedEnd:
    device: str
    kind: Kind
    port: str
    host: str | None = None


class PortLabelError(ValueError):
    pass


def parse_end(device: str, port: str) -> ParsedEnd:
    """Resolve a plan row's (device, port) pair to a device, its kind and a canonical port.

    Raises ``PortLabelError`` for a label no pattern accepts; the caller adds file, line and column.
    """
    device = " ".join(device.split())
    port = " ".join(port.split())
    if not device:
        raise PortLabelError("empty device name")
    if is_adapter_name(device):
        if m := _HCA_PORT.match(port):
            return ParsedEnd(device, Kind.ADAPTER, str(int(m.group(1))), host_of(device))
        raise PortLabelError(f"unknown port label {port!r} on adapter {device!r}")
    if (label := switch_port(port)) is not None:
        return ParsedEnd(device, Kind.SWITCH, label)
    lowered = port.casefold()
    prefix = device.casefold() + " "
    if lowered.startswith(prefix) and _ADAPTER_PORT.match(port[len(prefix) :]):
        return ParsedEnd(port, Kind.ADAPTER, ADAPTER_PORT, device)
    if _ADAPTER_PORT.match(port):
        return ParsedEnd(f"{device} {port}", Kind.ADAPTER, ADAPTER_PORT, device)
    raise PortLabelError(
        f"unknown port label {port!r} on {device!r} (expected 'Port N', 'N', '1/N/M', "
        "'Blade B_Port U/P', or a host adapter such as 'mlx5_0' or '<host> ibp11s0f0')"
    )


# --- director switches -------------------------------------------------------------------------------
# A director chassis (MCS8500, CS7500, QM9790 ...) is one switch made of many ASICs. ibnetdiscover and UFM
# describe each ASIC as ``<chassis>:<model>/L<blade>/U<unit>`` (a line card, whose front-panel ports are
# the chassis' external ports) or ``<chassis>:<model>/S<slot>/U<unit>`` (a spine/fabric card, wired only to
# line cards inside the chassis). UFM appends the ASIC port: ``<chassis>:L16/U2/20``. NDT writes line-card
# port ``L<b>/U<u>/<p>`` as ``Blade <b>_Port <u>/<p>``.
_DIRECTOR_ASIC = re.compile(r"(?:^|/)([LS])(\d+)/U(\d+)(?:/(\d+))?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class DirectorAsic:
    """One ASIC of a director chassis: a line card (``spine=False``) or an internal spine (``spine=True``)."""

    spine: bool
    slot: int
    unit: int

    def port_label(self, port: int) -> str | None:
        """Canonical label of ``port`` on this ASIC; None for a spine ASIC, whose ports are internal."""
        return None if self.spine else blade_port(self.slot, self.unit, port)


def blade_port(blade: int, unit: int, port: int) -> str:
    """Canonical label of port ``port`` of ASIC ``unit`` on line card ``blade`` (``Blade 16_Port 2/20``)."""
    return f"Blade {blade}_Port {unit}/{port}"


def director_asic(text: str) -> tuple[DirectorAsic, int | None] | None:
    """Parse ``MCS8500/L16/U2``, ``L16/U2`` or ``L16/U2/20`` (with the ASIC port) into the ASIC and port.

    Returns None when ``text`` does not name a director ASIC.
    """
    m = _DIRECTOR_ASIC.search(text.strip())
    if not m:
        return None
    asic = DirectorAsic(m.group(1).upper() == "S", int(m.group(2)), int(m.group(3)))
    return asic, int(m.group(4)) if m.group(4) is not None else None
