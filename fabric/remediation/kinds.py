"""The kinds of signal UFM's events become, and which event ids raise the ones no counted rule owns."""

from __future__ import annotations

from enum import StrEnum


class SignalKind(StrEnum):
    LINK_DOWN = "link_down"
    LINK_UP = "link_up"
    PORT_DOWN = "port_down"
    LINK_DOWNED = "link_downed"
    UNHEALTHY_PORT = "unhealthy_port"
    BER_CRITICAL = "ber_critical"
    BER_HIGH = "ber_high"
    PORT_ERRORS = "port_errors"
    RETRANSMISSION = "retransmission"
    TEMPERATURE = "temperature"
    MODULE_FAULT = "module_fault"
    WIDTH_DEGRADED = "width_degraded"
    SPEED_DEGRADED = "speed_degraded"
    SWITCH_DOWN = "switch_down"
    SWITCH_UP = "switch_up"
    ASIC_FAILURE = "asic_failure"
    DUPLICATE_GUID = "duplicate_guid"
    DUPLICATE_CABLE = "duplicate_cable"
    SWITCH_REBOOTED = "switch_rebooted"
    NODE_DOWN = "node_down"
    NODE_UP = "node_up"
    PACKET_DROPS = "packet_drops"
    """Packets dropped above UFM Telemetry's ``max_pdr`` (no UFM event raises it: the counters do)."""
    PORT_ACTION = "port_action"
    """UFM carried out a port action (disable, enable, reset), whoever asked for it."""


# UFM's event policy ids (its policy.csv) of every signal but the counted rules' (whose events
# are in their entries of fabric.remediation.rules.COUNTED_RULES).
BASE_EVENT_KINDS: dict[int, SignalKind] = {
    329: SignalKind.LINK_DOWN, 328: SignalKind.LINK_UP,
    276: SignalKind.PORT_DOWN, 112: SignalKind.LINK_DOWNED,
    702: SignalKind.UNHEALTHY_PORT,
    917: SignalKind.BER_CRITICAL, 915: SignalKind.BER_CRITICAL,
    750: SignalKind.RETRANSMISSION,
    919: SignalKind.TEMPERATURE, 392: SignalKind.TEMPERATURE, 911: SignalKind.TEMPERATURE,
    912: SignalKind.TEMPERATURE,
    394: SignalKind.MODULE_FAULT,
    130: SignalKind.WIDTH_DEGRADED, 701: SignalKind.SPEED_DEGRADED,
    907: SignalKind.SWITCH_DOWN, 909: SignalKind.SWITCH_DOWN, 908: SignalKind.SWITCH_UP, 910: SignalKind.SWITCH_UP,
    344: SignalKind.ASIC_FAILURE,
    1310: SignalKind.DUPLICATE_GUID, 1311: SignalKind.DUPLICATE_GUID,
    1503: SignalKind.DUPLICATE_CABLE,
    1312: SignalKind.SWITCH_REBOOTED,
    331: SignalKind.NODE_DOWN, 332: SignalKind.NODE_UP,
    336: SignalKind.PORT_ACTION,
}
