"""The columns of UFM Telemetry's CSV this package reads, by the names UFM gives them.

Columns are found by name: their order may differ and other columns (``source_id``, ``tag``, ``port_guid``,
``phy_*``, ``fec_mode_active``...) are ignored. The counter names are those of NVIDIA's PDR plugin
(``constants.py``); ``Link_Down_IB`` is LinkDownedCounterExt.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["KEY_COLUMNS", "NODE_GUID", "PORT_NUMBER", "REQUIRED_COLUMNS", "TEMPERATURE", "TIMESTAMP", "Counter"]

TIMESTAMP = "timestamp"
"""When the row's counters were read: microseconds since the epoch."""
NODE_GUID = "Node_GUID"
"""The port's node GUID, ``0x``-prefixed: with the port number, UFM's REST port name ``<guid>_<n>``."""
PORT_NUMBER = "Port_Number"
TEMPERATURE = "Module_Temperature"
"""The transceiver's temperature in °C: a gauge, not a counter; empty, ``NA``, ``N/A`` or 0 when the port has no
reading (a copper cable has no module to read), and UFM may write it with a ``C`` after the number."""


class Counter(StrEnum):
    """A cumulative counter of a port: it only grows, except when it is reset (port reset, switch reboot, UFM
    restart), which shows as a value lower than the last one."""

    SYMBOL_ERRORS = "Symbol_Errors"
    RCV_PACKETS = "PortRcvPktsExtended"
    RCV_ERRORS = "PortRcvErrors"
    RCV_REMOTE_PHYSICAL_ERRORS = "PortRcvRemotePhysicalErrors"
    LINK_DOWNED = "Link_Down_IB"


KEY_COLUMNS = (TIMESTAMP, NODE_GUID, PORT_NUMBER)
REQUIRED_COLUMNS = (*KEY_COLUMNS, *(counter.value for counter in Counter), TEMPERATURE)
"""Every column a sample must have, in the order a missing one is named."""
