"""What every scenario step is: a dataclass of parameters with ``apply``, and the field metadata that bounds them.

A step's fields are its parameters in a scenario file (durations are seconds, written ``"90s"``, ``"10m"``…);
``apply`` runs at the step's time, scheduling any later part on the simulated clock. A field's ``between``
metadata bounds it and ``check`` relates fields; both run when a step is parsed (``scenario.build_step``), so a
scenario file or admin request that asks for what cannot run is refused before anything is scheduled. The kinds
are in ``faults.py`` (UFM's events) and ``telemetry_steps.py`` (UFM Telemetry's counters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from fabric.simulator.state import SimState

DURATION = {"duration": True}
"""Field metadata: the parameter is a duration (``"90s"``, ``"10m"``…, at most ten years: see ``scenario``)."""


def between(low: float, high: float, *, duration: bool = False) -> dict[str, object]:
    """Field metadata: a given value must lie in ``low..high`` (NaN never does)."""
    return {"range": (low, high), "duration": duration}


def at_once_or_later(state: SimState, delay: float, label: str, callback: Callable[[], None]) -> None:
    """Run ``callback`` now when ``delay`` is not positive, else ``delay`` simulated seconds from now."""
    if delay <= 0:
        callback()
    else:
        state.schedule(delay, label, callback)


@dataclass(slots=True)
class Step:
    kind: ClassVar[str] = ""

    def apply(self, state: SimState) -> None:
        raise NotImplementedError

    def check(self) -> None:
        """Raise ValueError when the parameters, together, make no sense (each alone is checked on parsing)."""

    def label(self) -> str:
        return self.kind
