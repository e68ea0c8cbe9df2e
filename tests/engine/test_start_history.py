"""Start-up reads of UFM's history only what warming the pipeline needs (``cursor.needed_to_warm``), and warms it as
the whole history would."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from engine_support import Rig, restart, rig

from fabric.controller.engine import Engine
from fabric.ufm.cursor import CursorState, Lookback
from fabric.ufm.models import Event
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])


class Counted:
    """The rig's UFM client, counting the events each read returns; ``whole``: reading as before start-up's
    lookback existed (the whole history, for the cursor's state alone to sort)."""

    def __init__(self, inner: Any, *, whole: bool) -> None:
        self.inner, self.whole, self.returned = inner, whole, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def events(self, *, handed_over: CursorState | None = None, lookback: Lookback | None = None,
                     **filters: str) -> list[Event]:
        found: list[Event] = await self.inner.events(handed_over=None if self.whole else handed_over,
                                                     lookback=None if self.whole else lookback, **filters)
        self.returned += len(found)
        return found


def _started(r: Rig, *, whole: bool) -> tuple[Engine, Counted]:
    client = Counted(r.client, whole=whole)
    r.client = client  # type: ignore[assignment]
    engine = restart(r)
    r.client = client.inner
    return engine, client


def _warmed(engine: Engine) -> tuple[Any, ...]:
    """What a started engine holds of UFM's past: the detectors' signals per component, the events waiting for the
    first cycle, the cursor."""
    detectors = engine.pipeline.detectors
    return ({component: list(track.history) for component, track in detectors.tracks.items() if track.history},
            [(e.id, e.timestamp) for e in engine._waiting], engine.cursor.state)


def test_a_start_on_a_history_longer_than_the_horizon_reads_less_and_warms_the_same(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True) as r:
        horizon = r.engine.settings.rules.history.total_seconds()
        r.inject(fault="flap", link="core01-01/1", cycles=6, period="20s")  # long before the horizon
        r.advance(horizon * 2)
        r.cycle()
        r.inject(fault="flap", link="core01-01/2", cycles=2, period="20s")  # within it, handed over
        r.advance(horizon / 2)
        r.cycle()
        r.inject(fault="flap", link="core01-01/3", cycles=2, period="20s")  # within it, not handed over yet
        r.advance(60)
        lean, lean_read = _started(r, whole=False)
        whole, whole_read = _started(r, whole=True)
        assert _warmed(lean) == _warmed(whole)
        assert _warmed(lean)[0] and _warmed(lean)[1], "the scenario warms detectors and leaves events waiting"
        assert lean_read.returned < whole_read.returned, (lean_read.returned, whole_read.returned)


def test_a_start_within_a_burn_in_window_longer_than_the_horizon_reads_its_events_since_it_opened(
        tmp_path: Path) -> None:
    """A day's burn-in (the bring-up's) open across a restart: its first cycle judges every event since the window
    opened, older than the detectors' horizon as some are."""
    with rig(TINY, tmp_path, dry_run=True) as r:
        horizon = r.engine.settings.rules.history.total_seconds()
        r.inject(fault="flap", link="core01-01/1", cycles=2, period="20s")  # before the window
        r.advance(horizon * 2)
        with r.store.transaction() as tx:
            tx.ask_burnin(timedelta(days=1), reason="bring-up", requested_by="ops")
        r.cycle()
        r.inject(fault="flap", link="core01-01/2", cycles=2, period="20s")  # in the window, beyond the horizon
        r.advance(horizon * 1.5)
        r.cycle()
        lean, _ = _started(r, whole=False)
        whole, _ = _started(r, whole=True)
        (window,) = r.store.burnin_windows()
        assert window.started_at is not None

        def since_opened(engine: Engine) -> list[tuple[int, Any]]:
            return [(e.id, e.timestamp) for e in engine.burnin.history if e.timestamp >= window.started_at]

        assert since_opened(lean) == since_opened(whole) != []
        assert len(lean.burnin.history) < len(whole.burnin.history)
