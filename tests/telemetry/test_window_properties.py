"""Properties of the window over random counter histories: resets, gaps and rows served again never make a rate
up, BER is what a slow computation from its definition gives, and one end's link-down is never both ends'."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telemetry_rows import T0_US, Feed, port_names

from fabric.telemetry.records import ConditionKind, SampleVerdict
from fabric.telemetry.settings import BerWindow, TelemetrySettings
from fabric.telemetry.window import TelemetryWindow

NAMES = port_names(3)
RATE = 1e9
"""Slow ports, so that a few symbol errors are a BER near the thresholds below."""
UNGATED = {"partial_fraction": 1.0, "implausible_fraction": 1.0}
"""The gate left open: these properties are about the windows, not about the gate."""
FINE = TelemetrySettings(ber_windows=(BerWindow("12min", timedelta(minutes=12), 3e-12, timedelta(seconds=1)),
                                      BerWindow("30min", timedelta(minutes=30), 1e-12, timedelta(seconds=1))),
                         **UNGATED)
"""Every sample a point of history (samples are at least 60 s apart): the reference below needs no buckets."""


@dataclass(frozen=True)
class PortStep:
    seen: str
    """``read``, ``missing`` or ``served again`` (its last row's timestamp, with whatever counters)."""
    reset: float | None
    """None, or where the counters restart: a fraction of their value (0: from zero, as after a reboot)."""
    errors: int
    packets: int
    link_downs: int


port_steps = st.builds(PortStep, st.sampled_from(["read", "read", "read", "missing", "served again"]),
                       st.one_of(st.none(), st.none(), st.none(), st.sampled_from([0.0, 0.5, 0.9])),
                       st.integers(0, 4), st.integers(0, 10**12), st.integers(0, 2))
histories = st.lists(st.tuples(st.integers(60, 600), st.lists(port_steps, min_size=len(NAMES),
                                                                max_size=len(NAMES))), min_size=2, max_size=30)


@dataclass
class Played:
    verdicts: list[SampleVerdict] = field(default_factory=list)
    times: list[int] = field(default_factory=list)
    read: list[list[int | None]] = field(default_factory=list)
    """Per sample, each port's symbol errors as read anew (None: missing or served again)."""


def play(history: list[tuple[int, list[PortStep]]], window_settings: TelemetrySettings, *,
         errors_rise: bool = True, downs_on: tuple[int, ...] = (0, 1, 2)) -> Played:
    """Feed ``history`` to a window (ports 0 and 1 a cable), its errors rising or not, link-downs counted on the
    ports ``downs_on`` only."""
    feed = Feed(list(NAMES))
    for row in feed.rows.values():
        row.symbol_errors, row.rcv_errors, row.packets, row.link_downed = 10**6, 10**3, 10**15, 3
    watch = TelemetryWindow(NAMES, rates=[RATE] * len(NAMES), cables=[(NAMES[0], NAMES[1])],
                            settings=window_settings)
    played = Played()
    now = T0_US
    last_read: dict[str, int] = {}
    for seconds, drawn in history:
        now += seconds * 1_000_000
        ports = drawn
        if all(step.seen != "read" for step in drawn):  # a sample has at least one row read anew
            ports = [replace(drawn[0], seen="read"), *drawn[1:]]
        missing, read = [], {}
        for index, (name, step) in enumerate(zip(NAMES, ports, strict=True)):
            row = feed.rows[name]
            if step.reset is not None:
                for counter in ("symbol_errors", "rcv_errors", "remote_errors", "packets", "link_downed"):
                    setattr(row, counter, int(getattr(row, counter) * step.reset))
            if errors_rise:
                row.symbol_errors += step.errors
                row.rcv_errors += step.errors
            row.packets += step.packets
            if index in downs_on:
                row.link_downed += step.link_downs
            if step.seen == "missing" or (step.seen == "served again" and name not in last_read):
                missing.append(name)
            elif step.seen == "served again":
                row.time_us = last_read[name]
            else:
                row.time_us = last_read[name] = now
                read[name] = row.symbol_errors
        played.times.append(now)
        played.read.append([read.get(name) for name in NAMES])
        played.verdicts.append(watch.observe(feed.sample(now, missing=missing)))
    return played


@settings(max_examples=150, deadline=None)
@given(histories)
def test_errors_that_never_rise_make_no_rate_whatever_the_resets_and_gaps(history: list) -> None:
    played = play(history, FINE, errors_rise=False)
    for verdict in played.verdicts:
        assert {c.kind for c in verdict.conditions} <= {ConditionKind.LINK_DOWN_BOTH_ENDS}


@settings(max_examples=150, deadline=None)
@given(histories)
def test_no_figure_is_negative(history: list) -> None:
    for verdict in play(history, TelemetrySettings(**UNGATED)).verdicts:
        for condition in verdict.conditions:
            assert all(value >= 0 for value in condition.figures.values()), condition


def reference_ber(played: Played, window: BerWindow) -> dict[tuple[int, str], float]:
    """BER conditions by definition: errors counted only between two readings of a port where the counter rose;
    the reference the newest sample at least the window's length old, or the one before it when the port was not
    read at that one; the bits those of the time between, at the port's rate."""
    length_us = window.length.total_seconds() * 1e6
    totals: list[list[float | None]] = []
    total = [0.0] * len(NAMES)
    last: list[int | None] = [None] * len(NAMES)
    for read in played.read:
        for port, value in enumerate(read):
            if value is None:
                continue
            before = last[port]
            if before is not None and value >= before:
                total[port] += value - before
            last[port] = value
        totals.append([total[port] if read[port] is not None else None for port in range(len(NAMES))])
    found = {}
    for now, time in enumerate(played.times):
        old_enough = [j for j in range(now) if played.times[j] <= time - length_us]
        if not old_enough:
            continue
        newest = old_enough[-1]
        for port, name in enumerate(NAMES):
            current = totals[now][port]
            reference = next((j for j in (newest, newest - 1) if j >= 0 and totals[j][port] is not None), None)
            if current is None or reference is None:
                continue
            ber = (current - totals[reference][port]) / (RATE * (time - played.times[reference]) / 1e6)
            if ber > window.max_ber:
                found[(now, name)] = ber
    return found


@settings(max_examples=150, deadline=None)
@given(histories)
def test_ber_is_what_its_definition_gives(history: list) -> None:
    played = play(history, FINE)
    for window in FINE.ber_windows:
        seen = {(index, condition.ports[0]): condition.figures["ber"]
                for index, verdict in enumerate(played.verdicts) for condition in verdict.conditions
                if condition.kind is ConditionKind.BER and condition.figures["window_s"] == window.length.seconds}
        expected = reference_ber(played, window)
        assert seen.keys() == expected.keys()
        assert [seen[key] for key in expected] == pytest.approx(list(expected.values()), rel=1e-12)


@settings(max_examples=150, deadline=None)
@given(histories)
def test_a_link_down_on_one_end_is_never_both_ends(history: list) -> None:
    played = play(history, TelemetrySettings(**UNGATED), downs_on=(0, 2))
    assert not any(c.kind is ConditionKind.LINK_DOWN_BOTH_ENDS for v in played.verdicts for c in v.conditions)
