"""Port labels as wiring plans, UFM and ibnetdiscover spell them, reduced to one canonical form.

Switch ports: ``Port 21`` / ``21`` -> ``21``; ``Port 1/3/1`` / ``1/3/1`` (NDR cage/split labels) -> ``1/3/1``;
director-switch blades ``Blade 16_Port 2/20`` -> ``Blade 16_Port 2/20`` (whitespace, case and leading zeros
normalised). Host ends are adapters, named by their node description (``<host> mlx5_<k>`` or
``<host> <ifname>``), each with port ``1`` unless a port number is given.

Every number in a label is at most ``MAX_PORT_NUMBER``: a label with a larger one is not a port label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from topology.readcaches import read_cache


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
MAX_PORT_NUMBER = 1024
"""The largest number a port label may carry (port, cage, blade or ASIC). The largest InfiniBand directors have
800 external ports and an ASIC far fewer; a larger number is a typo or garbage, refused before ``int()`` sees
it (``int()`` of a string of over 4,300 digits raises an error that names no file)."""
_MAX_DIGITS = len(str(MAX_PORT_NUMBER))


class PortLabelError(ValueError):
    pass


def excerpt(text: str, limit: int = 40) -> str:
    """``repr(text)``, cut to ``limit`` characters with its length said: a value quoted in a one-line error."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def bounded_number(digits: str) -> int | None:
    """The number the decimal ``digits`` spell; None when it is above ``MAX_PORT_NUMBER``."""
    significant = digits.lstrip("0")
    if len(significant) > _MAX_DIGITS:
        return None
    value = int(significant or "0")
    return value if value <= MAX_PORT_NUMBER else None


def _number(digits: str) -> int:
    value = bounded_number(digits)
    if value is None:
        raise PortLabelError(f"port number {excerpt(digits)} is out of range (at most {MAX_PORT_NUMBER})")
    return value


def switch_port(text: str) -> str | None:
    """Canonical label of a switch port, or None when ``text`` is not one (a number out of range included)."""
    try:
        return checked_switch_port(text)
    except PortLabelError:
        return None


@read_cache(maxsize=1 << 14)
def checked_switch_port(text: str) -> str | None:
    """``switch_port``, but a label of a switch port's form with a number out of range raises ``PortLabelError``.

    Cached: a fabric's port labels are a few dozen texts, read for every cable end of a plan or snapshot."""
    label = text.strip()
    if m := _NUMERIC.match(label):
        return str(_number(m.group(1)))
    if m := _BLADE.match(label):
        return blade_port(_number(m.group(1)), _number(m.group(2)), _number(m.group(3)))
    if m := _SLASHED.match(label):
        head = m.group(1)
        head = str(_number(head)) if head.isdecimal() else head.lower()
        return f"{head}/{_number(m.group(2))}/{_number(m.group(3))}"
    return None


def display_port(label: str) -> str:
    """How a canonical port label reads in a report: ``Port 21``, ``Port 1/3/1``, ``Blade 3_Port 1/2``."""
    return label if label.startswith("Blade ") else f"Port {label}"


@read_cache(maxsize=1 << 14)
def is_adapter_name(device: str) -> bool:
    """True for a node description of the form ``<host> <adapter>`` (``luna-0001 mlx5_10``).

    Cached: asked of a switch's name for each of its ports."""
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


def parse_end(device: str, port: str) -> ParsedEnd:
    """Resolve a plan row's (device, port) pair to a device, its kind and a canonical port.

    Raises ``PortLabelError`` for a label no pattern accepts, or with a number above ``MAX_PORT_NUMBER``; the
    caller adds file, line and column.
    """
    device = " ".join(device.split())
    port = " ".join(port.split())
    if not device:
        raise PortLabelError("empty device name")
    if is_adapter_name(device):
        if m := _HCA_PORT.match(port):
            return ParsedEnd(device, Kind.ADAPTER, str(_number(m.group(1))), host_of(device))
        raise PortLabelError(f"unknown port label {excerpt(port)} on adapter {excerpt(device)}")
    if (label := checked_switch_port(port)) is not None:
        return ParsedEnd(device, Kind.SWITCH, label)
    lowered = port.casefold()
    prefix = device.casefold() + " "
    if lowered.startswith(prefix) and _ADAPTER_PORT.match(port[len(prefix) :]):
        return ParsedEnd(port, Kind.ADAPTER, ADAPTER_PORT, device)
    if _ADAPTER_PORT.match(port):
        return ParsedEnd(f"{device} {port}", Kind.ADAPTER, ADAPTER_PORT, device)
    raise PortLabelError(
        f"unknown port label {excerpt(port)} on {excerpt(device)} (expected 'Port N', 'N', '1/N/M', "
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

    Returns None when ``text`` does not name a director ASIC; raises ``PortLabelError`` when it names one with a
    number above ``MAX_PORT_NUMBER``.
    """
    m = _DIRECTOR_ASIC.search(text.strip())
    if not m:
        return None
    asic = DirectorAsic(m.group(1).upper() == "S", _number(m.group(2)), _number(m.group(3)))
    return asic, _number(m.group(4)) if m.group(4) is not None else None
