"""What the engine keeps of one read of UFM's systems, links and ports, in memory of its own.

A read makes the as-built model of the whole fabric and drops it once the view is made (on h100-32k, 150 MiB of
objects made within the read). What the engine keeps of it is small (UFM's GUIDs and port names placed on the
plan, the cables up below their planned rate, the ports UFM shows disabled), but made among those objects it kept
the allocator's arenas they were in from the system once they were dropped, and so did the interpreter's free lists
(the reading's last freed tuples, lists and dicts, kept for reuse): after start on h100-32k, 101 MB of the engine's
311 MiB were free memory in arenas so held (``sys._debugmallocstats``). So what is kept is taken out as plain values
(``marshal``), the reading dropped with the readers' caches of its names, the free lists emptied, and what is kept
made again from the values in one go, as the API makes its plan's index (``fabric.api.plan_index``).
"""

from __future__ import annotations

import gc
import marshal
from dataclasses import dataclass

from fabric.remediation.policy import FabricContext
from fabric.remediation.view import FabricView, build_view, view_from_values, view_values
from fabric.ufm.plausibility import TopologyFigures
from fabric.ufm.snapshot import UfmTopology
from topology.guard import CableKey
from topology.model import Cable, End, Fabric
from topology.readcaches import forget_read_names
from topology.verify import below_plan


@dataclass(frozen=True, slots=True)
class KeptReading:
    """A reading as the engine keeps it, the reading itself gone (``kept_of``)."""

    payload: bytes
    """``marshal`` of the view's values, the ports UFM shows disabled and the cables up below plan."""
    live: set[CableKey]
    """Planned cables UFM shows up, cabled as planned (the plan's own keys: nothing of the reading)."""
    figures: TopologyFigures

    def restored(self, plan: Fabric, context: FabricContext) -> tuple[FabricView, dict[CableKey, Cable],
                                                                      frozenset[str]]:
        """The view, the cables up below plan (as UFM shows them) and the ports UFM shows disabled, made again: called
        once the reading is dropped. The interpreter's free lists are emptied first (a full collection does it):
        they keep up to 2,000 of each size of tuple, and lists, dicts and floats, of the reading's, and each kept
        object holds its arena (on h100-32k 59 arenas, 58 MiB, nearly empty but for them)."""
        gc.collect()
        view, disabled, below = marshal.loads(self.payload)
        slow = (Cable(End(a_device, a_port), End(b_device, b_port), width, speed, origin)
                for a_device, a_port, b_device, b_port, width, speed, origin in below)
        return view_from_values(plan, context, view), {cable.key: cable for cable in slow}, frozenset(disabled)


def kept_of(plan: Fabric, context: FabricContext, reading: UfmTopology) -> KeptReading:
    """What the engine keeps of ``reading``; the readers' caches, which hold its names, are emptied (the caller
    drops the reading: nothing returned refers to it)."""
    actual = reading.fabric
    view = build_view(plan, actual, context)
    live = view.live_cables(actual)
    planned = plan.by_end
    below = [(*cable.a, *cable.b, cable.width, cable.speed_gbps, cable.origin) for cable in actual.cables
             if cable.key in live and below_plan(cable, (ours := planned[cable.a]).width, ours.speed_gbps)]
    payload = marshal.dumps((view_values(view), sorted(reading.disabled_ports), below))
    forget_read_names()
    return KeptReading(payload, live, TopologyFigures.of(reading, len(live)))
