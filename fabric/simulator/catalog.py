"""The UFM events the simulator raises: id, name, severity, category, message template, alarm settings.

Facts are UFM's own event policy table (``policy.csv`` of Mellanox/ufm_sdk_3.0,
``plugins/ufm_log_analyzer_plugin/src/loganalyze/old_logic/policy.csv``; a copy sits in
``shared/conformance/ufm_sdk/events/policy.csv`` and ``tests/simulator`` checks this table against it).
Columns used: 1 id, 2 name, 12 alarm type, 13 alarm flag, 15 severity, 17 TTL seconds, 19 policy object,
20 message template, 21 category.  Reading column 12 as the alarm ``type`` is confirmed by the documented
alarm example (event 394 -> ``"type": 55``); column 13 as "raises an alarm" is UNCONFIRMED.

``object_type`` is the object class UFM names in the event itself (REST ``type`` from 6.17, the word
after the category in ``event.log``).  It is *not* the policy-object column: a real ``event.log`` line
shows event 329 (policy object Site) as ``Link`` and 112 (policy object Port) as ``IBPort``.  The other
classes below are inferred the same way and are UNCONFIRMED.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EventSpec:
    id: int
    name: str
    severity: str
    object_type: str
    category: str
    template: str
    alarm_type: int
    raises_alarm: bool
    ttl: int
    """Seconds an alarm of this event stays without a repeat (0: until cleared)."""

    def describe(self, *args: object, **named: object) -> str:
        """The message template filled in (printf style, as UFM's templates are written)."""
        if named:
            text = self.template % named
        elif args:
            text = self.template % args
        else:
            text = self.template
        return text.strip()


def _spec(
    event_id: int, name: str, severity: str, object_type: str, category: str, template: str,
    alarm_type: int, raises_alarm: bool, ttl: int,
) -> EventSpec:
    return EventSpec(event_id, name, severity, object_type, category, template, alarm_type, raises_alarm, ttl)


_PEER = " Peer info: %s."
SPECS: dict[int, EventSpec] = {s.id: s for s in (
    _spec(110, "Symbol Error", "Warning", "IBPort", "Hardware",
          "Symbol-Error counter rate threshold exceeded. Threshold is %d, received value is %d." + _PEER,
          4, True, 300),
    _spec(111, "Link Error Recovery", "Minor", "IBPort", "Hardware",
          "Link-Error-Recovery counter rate threshold exceeded. Threshold is %d, received value is %d." + _PEER,
          4, True, 300),
    _spec(112, "Link Downed", "Warning", "IBPort", "Hardware",
          "Link-Downed counter delta threshold exceeded. Threshold is %d, calculated delta is %d." + _PEER,
          5, True, 300),
    _spec(113, "Port Receive Errors", "Warning", "IBPort", "Hardware",
          "PortRcvErrors counter rate threshold exceeded. Threshold is %d, received value is %d." + _PEER,
          4, True, 300),
    _spec(123, "Port Bandwidth (%) Threshold Reached", "Minor", "IBPort", "Communication Error",
          "Port Normalized Transmit BW counter threshold exceeded. Threshold is %d, received value is %d." + _PEER,
          4, True, 300),
    _spec(130, "Non-optimal link width", "Minor", "IBPort", "Hardware",
          "Found a %s link that operates in %s width mode.", 5, True, 0),
    _spec(328, "Link is Up", "Info", "Link", "Fabric Topology", "Link is up: %s ", 10, False, 0),
    _spec(329, "Link is Down", "Warning", "Link", "Fabric Topology", "Link went down: %s ", 10, False, 0),
    _spec(331, "Node is Down", "Warning", "Computer", "Fabric Topology",
          "Site configuration changes: %s node is Down", 10, False, 0),
    _spec(332, "Node is Up", "Info", "Computer", "Fabric Topology",
          "Site configuration changes: %s node is Up", 10, False, 300),
    _spec(336, "Port Action Succeeded", "Info", "IBPort", "Maintenance", "Port %s action %s succeeded",
          10, False, 0),
    _spec(337, "Port Action Failed", "Minor", "IBPort", "Maintenance", "Port %s action %s failed", 10, False, 0),
    _spec(392, "Module Temperature Threshold Reached", "Minor", "Module", "Hardware",
          "Module Temperature threshold was exceeded. Threshold is %d, received value is %d.", 10, True, 300),
    _spec(394, "Module status FAULT", "Critical", "Switch", "Module Status", "Module %s %s on %s(%s) status is %s",
          55, True, 420),
    _spec(701, "Non-optimal Link Speed", "Minor", "IBPort", "Hardware",
          "Found a %s link that operates in %s speed mode.", 5, True, 0),
    _spec(702, "Unhealthy IB Port", "Warning", "IBPort", "Hardware",
          "Peer Port %s is considered by SM as unhealthy due to %s.", 71, True, 0),
    _spec(907, "Switch is Down", "Critical", "Switch", "Fabric Topology",
          "Site configuration changes: %s Switch is Down", 10, True, 0),
    _spec(908, "Switch is Up", "Info", "Switch", "Fabric Topology",
          "Site configuration changes: %s Switch is Up", 10, True, 300),
    _spec(911, "Module Temperature Low Threshold Reached", "Warning", "Module", "Hardware",
          "Module Temperature threshold was exceeded. Sensor id is %d Threshold is %d, received value is %d.",
          10, True, 300),
    _spec(915, "Critical BER reported", "Critical", "IBPort", "Hardware",
          "Effective BER Error on Port (%s)  exceeded critical threshold (%s)", 80, False, 420),
    _spec(916, "High BER reported", "Warning", "IBPort", "Hardware",
          "Effective BER Warning  on Port (%s)  exceeded warning  threshold (%s)", 80, False, 420),
    _spec(917, "Critical Symbol BER reported", "Critical", "IBPort", "Hardware",
          "Symbol BER Error on Port (%s)  exceeded critical threshold (%s)", 80, False, 420),
    _spec(918, "High Symbol BER reported", "Warning", "IBPort", "Hardware",
          "Symbol BER Warning  on Port (%s)  exceeded warning  threshold (%s)", 80, False, 420),
    _spec(919, "Cable Temperature High", "Critical", "IBPort", "Hardware", "%s", 10, True, 0),
    # External events: what UFM's plugins (and this service) put in UFM's event log by
    # ``POST /app/events/external_event``; the description is the caller's.
    _spec(551, "General External Event Notification", "Info", "Grid", "Maintenance", "%s", 75, True, 1),
    _spec(552, "General External Event Notice", "Minor", "Grid", "Maintenance", "%s", 75, True, 1),
    _spec(553, "General External Event Alert", "Warning", "Grid", "Maintenance", "%s", 75, True, 1),
    _spec(554, "General External Event Error", "Critical", "Grid", "Maintenance", "%s", 75, True, 1),
    _spec(1312, "Switch was Rebooted", "Info", "Switch", "Fabric Notification",
          "Switch was rebooted: NODE_GUID = %(node_guid)s.", 4, True, 0),
)}


def spec(event_id: int) -> EventSpec:
    """The catalog entry of ``event_id`` (KeyError for an event the simulator does not raise)."""
    return SPECS[event_id]


EXTERNAL_EVENTS: tuple[int, ...] = (551, 552, 553, 554)
"""The event ids ``POST /app/events/external_event`` accepts (Info, Minor, Warning, Critical)."""

# Events a storm may be made of: per-port threshold events that need only a peer and two numbers.
STORM_EVENTS: tuple[int, ...] = (110, 111, 112, 113)
WEAK_PORT_EVENTS: tuple[int, ...] = (110, 111, 113)
"""The error threshold events a weak port raises (those of the errors rule the catalog has)."""
