"""A read of UFM's topology whose lists are the very bytes the last reading accepted was made of makes that reading
again (``Engine._read_fabric``): the full reconcile reads the topology every few minutes whatever UFM's counters
say, and making a reading of h100-32k is 5 s of CPU and 110-165 MiB more memory while it lasts. One byte changed
and the reading is made anew, so a change the counters missed still cannot outlive one reconcile."""

from __future__ import annotations

from pathlib import Path

from engine_support import Rig, rig

from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])


def _reading(r: Rig) -> tuple[object, ...]:
    engine = r.engine
    assert engine.view is not None
    ports = engine.view.resolver.ports
    return (engine.view.plan_keys, dict(ports.items()), frozenset(engine.live), dict(engine.below),
            frozenset(engine.out.disabled), engine.out.listed, engine.shown_disabled)


def test_unchanged_lists_keep_the_reading_and_a_changed_byte_makes_it_anew(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        view, live = r.engine.view, r.engine.live
        r.runner.run(r.engine.reconcile())
        assert r.engine.view is view and r.engine.live is live and r.engine.pipeline.view is view
        kept = _reading(r)

        r.engine._accepted_digest = None  # made anew from the same lists: the same reading
        r.runner.run(r.engine.reconcile())
        assert r.engine.view is not view and _reading(r) == kept

        r.inject(fault="link_down", link="core01-01/1")
        before = r.engine.view
        r.runner.run(r.engine.reconcile())
        assert r.engine.view is not before and r.engine.pipeline.view is r.engine.view
        assert len(r.engine.live) == len(live) - 1  # the cable down, read although nothing else changed
