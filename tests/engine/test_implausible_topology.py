"""A reading of UFM's topology that cannot be true is refused (issue 9, finding 13): the last one accepted stays,
nothing is decided on it, the refusal is logged, counted and flagged while it lasts."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest
from engine_support import restart, rig

from fabric.remediation.domain import ActionKind
from fabric.ufm.plausibility import (
    ImplausibleTopologyError,
    PlausibilitySettings,
    TopologyFigures,
    refusal,
    start_refusal,
)
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])
FLAP = {"fault": "flap", "link": "core01-01/1", "cycles": 5, "period": "20s"}


def test_the_figures_and_their_limits() -> None:
    planned = TopologyFigures.planned(TINY)
    assert planned == TopologyFigures(systems=20, ports=96, active_ports=96, cables=48)  # 12 switches, 8 hosts
    settings = PlausibilitySettings()
    assert refusal(planned, replace(planned, cables=29), settings) is None  # 19 of 48 gone: 39.6 %
    assert refusal(planned, replace(planned, cables=28), settings) == (
        "planned cables UFM shows up: 28, against 48 in the last reading accepted (more than 40% gone at once)")
    assert "ports UFM shows active: 0" in str(refusal(planned, replace(planned, active_ports=0), settings))
    assert refusal(planned, replace(planned, systems=60, ports=300), settings) is None  # more is no harm
    assert refusal(planned, replace(planned, cables=0), PlausibilitySettings(max_drop=1.0)) is None  # off
    assert start_refusal(planned, replace(planned, cables=24, active_ports=0), settings) is None
    assert start_refusal(planned, replace(planned, ports=47), settings) == (
        "ports UFM lists: 47 of 96 planned (at least 50% expected)")
    assert start_refusal(planned, replace(planned, cables=0), PlausibilitySettings(min_planned=0.0)) is None


@pytest.mark.parametrize(("endpoint", "mode"), [("/resources/links", "empty"), ("/resources/links", "partial"),
                                                ("/resources/ports", "empty"), ("/resources/systems", "partial")])
def test_a_reading_that_cannot_be_true_is_refused_and_nothing_is_decided_on_it(
        tmp_path: Path, endpoint: str, mode: str, caplog: pytest.LogCaptureFixture) -> None:
    with rig(TINY, tmp_path) as r:
        assert r.cycle().views_refused == 0
        r.inject(**FLAP)
        r.advance(300)  # the flap has settled, and UFM's change counters moved: the next cycle reads the topology
        r.inject(fault="api", endpoint=endpoint, mode=mode, keep=0.5, requests=2)
        refused_at = r.state.now()
        for _ in range(2):
            with caplog.at_level(logging.WARNING, logger="fabric.controller.engine"):
                report = r.cycle()
            # Before: the reading was taken as it was and the flapping link disabled on it: with [] the guard
            # counted all 32 switch cables down (the flapping one "already down": no capacity check), with half the
            # links 16 of them; with no ports or half the systems nothing was even noticed.
            assert report.views_refused == 1 and r.engine.view_refused_since == refused_at
            assert (report.events, report.findings, report.actions, report.executed) == (0, [], [], 0)
            assert r.engine.guard.out == set(), "the last reading accepted stays"
            assert not r.state.fabric.disabled and r.tickets.list() == []  # (UFM's own state: no request)
            assert "UFM's topology cannot be true" in caplog.records[-1].getMessage()
            r.advance(60)
        saved = r.store.load_cursor()
        assert saved is not None and saved.high_water_id == 0, "the cursor is not saved while readings are refused"
        accepted = r.cycle()
        assert accepted.views_refused == 0 and r.engine.view_refused_since is None
        assert accepted.events == 10, "the events read while refused are decided now, each once"
        assert [(a.kind, a.rule) for a in accepted.actions if a.kind is not ActionKind.RECORD] == [
            (ActionKind.DISABLE, "flap"), (ActionKind.TICKET, "flap")]


def test_a_restart_while_readings_are_refused_loses_no_event(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.cycle()
        r.inject(**FLAP)
        r.advance(300)
        r.inject(fault="api", endpoint="/resources/links", mode="empty", requests=1)
        assert r.cycle().views_refused == 1
        restart(r)  # the events read while refused are above the cursor saved before: handed to the first cycle
        report = r.cycle()
        assert report.events == 10 and report.views_refused == 0
        assert [(a.kind, a.rule) for a in report.actions if a.kind is not ActionKind.RECORD] == [
            (ActionKind.DISABLE, "flap"), (ActionKind.TICKET, "flap")]


def test_start_up_refuses_a_reading_that_cannot_be_true_of_the_plan(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.inject(fault="api", endpoint="/resources/links", mode="empty", requests=1)
        with pytest.raises(ImplausibleTopologyError) as refused:
            restart(r)
        assert str(refused.value) == (
            "UFM's topology cannot be true (planned cables UFM shows up: 0 of 48 planned (at least 50% expected)): "
            "not starting on it; check UFM (or plausibility.min_planned) and start again")
        assert refused.value.kind.value == "ufm"
        engine = restart(r)  # UFM answers in full again
        assert engine.view_refused_since is None and engine.guard.out == set()
        r.advance(60)
        assert r.cycle().views_refused == 0
