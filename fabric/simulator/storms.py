"""Storms over the whole fabric at one instant (``POST /simulator/events/bulk`` with a ``kind``), for benchmarks.

| kind          | events                                                                                      |
|---------------|---------------------------------------------------------------------------------------------|
| `link_bounce` | 329 Link went down from both ends of every cable, the clock moved `up_after`, then 328 Link |
|               | is up from both ends: four events a cable (393,216 on h100-32k)                              |
| `ber_high`    | 918 High Symbol BER from both ends of every switch-to-switch cable: a ``ber_high`` finding   |
|               | on each (two of its events within the window), enough to trip the storm breaker many times |

Only the events are raised: the fabric's state (links up, counters, alarms aside) stays as it was, as when UFM
relays a burst of traps for a fabric that is back by the time it is read. The threshold storm on random ports is
``fabric.simulator.faults.storm``.
"""

from __future__ import annotations

from fabric.simulator.catalog import spec
from fabric.simulator.naming import link_ends_text, link_object
from fabric.simulator.state import SimState

FABRIC_STORMS = ("link_bounce", "ber_high")


def link_bounce(state: SimState, up_after: float) -> int:
    """Every cable's ends down at once, then up ``up_after`` simulated seconds later; the events raised."""
    with state.lock:
        names = state.fabric.names
        ends = [(names[link.a], names[link.b]) for link in state.fabric.links.values()]
        for event_id, wait in ((329, up_after), (328, 0.0)):
            described = spec(event_id)
            for a, b in ends:
                for first, second in ((a, b), (b, a)):
                    state.emit(event_id, link_object(first, second), described.describe(link_ends_text(first,
                                                                                                     second)))
            if wait:
                state.advance(wait)
        state.events.warm(state.shape)
    return 4 * len(ends)


def ber_high(state: SimState) -> int:
    """918 from both ends of every switch-to-switch cable, at the BER of the ``ber`` step's warning; the events
    raised."""
    with state.lock:
        names = state.fabric.names
        ports = [port for link in state.fabric.links.values() if names[link.a].is_switch and names[link.b].is_switch
                 for port in (link.a, link.b)]
        for port in ports:
            state.emit_port(918, port, port, "1e-13")
        state.events.warm(state.shape)
    return len(ports)
