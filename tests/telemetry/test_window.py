"""TelemetryWindow: deltas across resets and gaps, each condition, the BER windows and the gate."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from telemetry_rows import MINUTE_US, NDR_BPS, T0_US, Feed, port_names

from fabric.telemetry.errors import TelemetryInputError
from fabric.telemetry.records import ConditionKind, SampleVerdict, Verdict
from fabric.telemetry.settings import BerWindow, TelemetrySettings
from fabric.telemetry.window import TelemetryWindow

FIVE_MIN_US = 5 * MINUTE_US
NAMES = port_names(12)
CABLES = [(NAMES[i], NAMES[i + 1]) for i in range(0, 12, 2)]
"""Six cables: ports 0-1, 2-3, ... 10-11."""


def window(settings: TelemetrySettings | None = None, rates: float = NDR_BPS) -> TelemetryWindow:
    return TelemetryWindow(NAMES, rates=[rates] * len(NAMES), cables=CABLES, settings=settings)


def kinds(verdict: SampleVerdict) -> list[tuple[ConditionKind, tuple[str, ...]]]:
    return [(condition.kind, condition.ports) for condition in verdict.conditions]


def busy(feed: Feed, packets: int = 10**9) -> None:
    """Every port received ``packets`` more."""
    for row in feed.rows.values():
        row.packets += packets


def test_packet_drops_are_judged_on_the_interval_and_reported_while_they_last() -> None:
    feed, watch = Feed(NAMES), window()
    assert watch.observe(feed.sample(T0_US)).conditions == ()
    for step in (1, 2):
        busy(feed)
        feed.rows[NAMES[3]].rcv_errors += 2
        feed.rows[NAMES[3]].remote_errors += 1
        verdict = watch.observe(feed.sample(T0_US + step * FIVE_MIN_US))
        assert verdict.verdict is Verdict.ACCEPTED
        assert kinds(verdict) == [(ConditionKind.PACKET_DROPS, (NAMES[3],))]
        figures = verdict.conditions[0].figures
        assert figures["drop_rate"] == pytest.approx(3e-9)
        assert (figures["rcv_errors"], figures["remote_physical_errors"], figures["packets"]) == (2, 1, 10**9)
        assert "packet drop rate 3e-09 above 1e-12" in verdict.conditions[0].reason
    busy(feed)
    assert watch.observe(feed.sample(T0_US + 3 * FIVE_MIN_US)).conditions == ()


def test_no_packet_drop_rate_without_packets_or_across_a_reset() -> None:
    feed, watch = Feed(NAMES), window()
    feed.rows[NAMES[0]].packets = 10**12
    watch.observe(feed.sample(T0_US))
    feed.rows[NAMES[1]].rcv_errors += 5  # no packets moved on it
    feed.rows[NAMES[0]].packets = 1000  # reset: the packets counter went down
    feed.rows[NAMES[0]].rcv_errors += 5
    assert watch.observe(feed.sample(T0_US + FIVE_MIN_US)).conditions == ()


def test_link_down_on_both_ends_of_a_cable_in_one_interval() -> None:
    feed, watch = Feed(NAMES), window()
    watch.observe(feed.sample(T0_US))
    feed.rows[NAMES[2]].link_downed += 1
    feed.rows[NAMES[3]].link_downed += 2
    verdict = watch.observe(feed.sample(T0_US + FIVE_MIN_US))
    assert kinds(verdict) == [(ConditionKind.LINK_DOWN_BOTH_ENDS, (NAMES[2], NAMES[3]))]
    assert dict(verdict.conditions[0].figures) == {"link_downed_a": 1, "link_downed_b": 2}


@pytest.mark.parametrize("case", ["one end", "ends of two cables", "ends in two intervals", "other end reset",
                                  "other end missing"])
def test_link_down_on_one_end_is_no_condition(case: str) -> None:
    feed, watch = Feed(NAMES), window()
    feed.rows[NAMES[3]].link_downed = 7
    watch.observe(feed.sample(T0_US))
    feed.rows[NAMES[2]].link_downed += 1
    missing: list[str] = []
    if case == "ends of two cables":
        feed.rows[NAMES[4]].link_downed += 1
    elif case == "other end reset":
        feed.rows[NAMES[3]].link_downed = 1  # a switch reboot: the counter restarts and counts the link's return
    elif case == "other end missing":
        feed.rows[NAMES[3]].link_downed += 1
        missing = [NAMES[3]]
    assert watch.observe(feed.sample(T0_US + FIVE_MIN_US, missing=missing)).conditions == ()
    if case == "ends in two intervals":
        feed.rows[NAMES[3]].link_downed += 1
        assert watch.observe(feed.sample(T0_US + 2 * FIVE_MIN_US)).conditions == ()


def test_a_hot_module_and_a_quick_rise() -> None:
    feed, watch = Feed(NAMES), window()
    feed.rows[NAMES[5]].temperature = "71C"
    first = watch.observe(feed.sample(T0_US))
    assert kinds(first) == [(ConditionKind.MODULE_TEMPERATURE, (NAMES[5],))]  # no history needed
    assert "module at 71 °C, above 70 °C" in first.conditions[0].reason
    feed.rows[NAMES[5]].temperature = "50"
    feed.rows[NAMES[6]].temperature = "51"  # from 40: a rise of 11
    feed.rows[NAMES[7]].temperature = "50"  # a rise of 10: not more than d_tmax
    verdict = watch.observe(feed.sample(T0_US + FIVE_MIN_US))
    assert kinds(verdict) == [(ConditionKind.TEMPERATURE_RISE, (NAMES[6],))]
    assert verdict.conditions[0].figures["previous"] == 40


def test_a_module_without_a_reading_is_compared_with_its_last_reading() -> None:
    feed, watch = Feed(NAMES), window()
    watch.observe(feed.sample(T0_US))
    feed.rows[NAMES[0]].temperature = "N/A"
    assert watch.observe(feed.sample(T0_US + FIVE_MIN_US)).conditions == ()
    feed.rows[NAMES[0]].temperature = "55"
    assert kinds(watch.observe(feed.sample(T0_US + 2 * FIVE_MIN_US))) == [
        (ConditionKind.TEMPERATURE_RISE, (NAMES[0],))]


def ber_feed(errors_per_sample: int, samples: int, interval_us: int = FIVE_MIN_US,
             settings: TelemetrySettings | None = None, rate: float = NDR_BPS) -> list[SampleVerdict]:
    feed, watch = Feed(NAMES), window(settings, rate)
    verdicts = []
    for step in range(samples):
        verdicts.append(watch.observe(feed.sample(T0_US + step * interval_us)))
        feed.rows[NAMES[8]].symbol_errors += errors_per_sample
    return verdicts


def test_ber_over_the_12_minute_window_at_ndr() -> None:
    # 300 s apart, the window's reference is 15 minutes back: 3 samples. 4 errors a sample: 12 in 900 s at
    # 400 Gb/s is a BER of 3.3e-14, over 1e-14; 2 a sample is 1.67e-14, over; 1 a sample is 8.3e-15, under.
    verdicts = ber_feed(4, 6)
    assert [kinds(v) for v in verdicts[:3]] == [[], [], []]  # the window is not full before 15 minutes
    condition = verdicts[3].conditions[0]
    assert (condition.kind, condition.ports) == (ConditionKind.BER, (NAMES[8],))
    assert condition.figures["ber"] == pytest.approx(12 / (400e9 * 900))
    assert condition.figures["span_s"] == 900
    assert condition.figures["window_s"] == 720
    assert "over the last 15 min (12min window) above 1e-14: 12 symbol errors at 400 Gb/s" in condition.reason
    assert all(kinds(v) == [(ConditionKind.BER, (NAMES[8],))] for v in verdicts[3:])
    assert not any(v.conditions for v in ber_feed(1, 6))


def test_the_same_ber_threshold_at_another_speed() -> None:
    # At 100 Gb/s (4x EDR-like), 1 error per sample is a BER of 3.3e-14 over 15 minutes.
    assert kinds(ber_feed(1, 4, rate=100e9)[3]) == [(ConditionKind.BER, (NAMES[8],))]
    assert not any(v.conditions for v in ber_feed(1, 4, rate=0))  # no rate known: not judged


def test_ber_over_the_125_minute_window() -> None:
    # 1 error every 5 minutes at 400 Gb/s: a BER of 8.3e-15, under 1e-14 but over 1e-15, seen once 125 min old.
    verdicts = ber_feed(1, 28)
    assert not any(v.conditions for v in verdicts[:25])
    condition = verdicts[25].conditions[0]
    assert condition.figures["window_s"] == 7500
    assert condition.figures["span_s"] == 7500
    assert condition.figures["symbol_errors"] == 25


def test_a_reset_adds_nothing_to_the_ber_windows_and_takes_nothing_away() -> None:
    feed, watch = Feed(NAMES), window()
    feed.rows[NAMES[8]].symbol_errors = 1000
    for step in range(8):
        if step == 4:
            feed.rows[NAMES[8]].symbol_errors = 0  # the switch rebooted
        verdict = watch.observe(feed.sample(T0_US + step * FIVE_MIN_US))
        assert verdict.conditions == ()
    feed.rows[NAMES[8]].symbol_errors += 20
    assert kinds(watch.observe(feed.sample(T0_US + 8 * FIVE_MIN_US))) == [(ConditionKind.BER, (NAMES[8],))]


def test_a_gap_is_not_zero_and_the_next_reading_covers_it() -> None:
    feed, watch = Feed(NAMES), window()
    watch.observe(feed.sample(T0_US))
    busy(feed)
    feed.rows[NAMES[1]].rcv_errors += 1
    gap = watch.observe(feed.sample(T0_US + FIVE_MIN_US, missing=[NAMES[1]]))
    assert gap.conditions == ()
    assert gap.fresh == len(NAMES) - 1
    busy(feed)
    verdict = watch.observe(feed.sample(T0_US + 2 * FIVE_MIN_US))
    assert kinds(verdict) == [(ConditionKind.PACKET_DROPS, (NAMES[1],))]
    assert verdict.conditions[0].figures["packets"] == 2 * 10**9  # both intervals


def test_a_row_served_again_is_not_a_reading() -> None:
    feed, watch = Feed(NAMES), window()
    watch.observe(feed.sample(T0_US))
    feed.rows[NAMES[1]].time_us = T0_US  # the switch was not read again: its old row, with new junk
    feed.rows[NAMES[1]].link_downed = 5
    feed.rows[NAMES[0]].link_downed = 1
    verdict = watch.observe(feed.sample(T0_US + FIVE_MIN_US))
    assert (verdict.verdict, verdict.fresh, verdict.conditions) == (Verdict.ACCEPTED, len(NAMES) - 1, ())


def test_a_stale_sample_is_ignored_whole() -> None:
    feed, watch = Feed(NAMES), window()
    watch.observe(feed.sample(T0_US))
    feed.rows[NAMES[0]].link_downed += 1
    feed.rows[NAMES[1]].link_downed += 1
    stale = watch.observe(feed.sample(T0_US))
    assert (stale.verdict, stale.conditions, stale.fresh) == (Verdict.STALE, (), 0)
    assert "stale" in stale.reason
    # Nothing of it was taken: the next sample sees the link-down.
    assert kinds(watch.observe(feed.sample(T0_US + FIVE_MIN_US))) == [
        (ConditionKind.LINK_DOWN_BOTH_ENDS, (NAMES[0], NAMES[1]))]


def test_timestamps_going_backwards_are_refused_naming_the_line() -> None:
    feed, watch = Feed(NAMES), window()
    watch.observe(feed.sample(T0_US))
    feed.rows[NAMES[4]].time_us = T0_US - 1
    older = feed.sample(T0_US - 2)
    with pytest.raises(TelemetryInputError, match=r"^sample-at-\d+:6: column 'timestamp': .*went backwards"):
        watch.observe(older)


def test_a_partial_sample_acts_on_nothing_and_says_so() -> None:
    feed, watch = Feed(NAMES), window(TelemetrySettings(partial_fraction=0.25))
    watch.observe(feed.sample(T0_US))
    busy(feed)
    feed.rows[NAMES[0]].rcv_errors += 1
    fine = watch.observe(feed.sample(T0_US + FIVE_MIN_US, missing=NAMES[9:]))  # 3 of 12 missing: 25 %
    assert kinds(fine) == [(ConditionKind.PACKET_DROPS, (NAMES[0],))]
    busy(feed)
    feed.rows[NAMES[0]].rcv_errors += 1
    partial = watch.observe(feed.sample(T0_US + 2 * FIVE_MIN_US, missing=NAMES[8:]))
    assert (partial.verdict, partial.conditions) == (Verdict.PARTIAL, ())
    assert partial.reason == "partial: 4 of 12 ports missing or not read again (more than 25%)"


def test_an_implausible_sample_acts_on_nothing_and_is_not_counted() -> None:
    feed, watch = Feed(NAMES), window()
    watch.observe(feed.sample(T0_US))
    busy(feed)
    for name in NAMES[:5]:  # 5 of 12 ports: more than a third
        feed.rows[name].symbol_errors += 10**6
        feed.rows[name].rcv_errors += 10
    implausible = watch.observe(feed.sample(T0_US + FIVE_MIN_US))
    assert (implausible.verdict, implausible.conditions, implausible.crossing) == (Verdict.IMPLAUSIBLE, (), 5)
    assert implausible.reason == "implausible: 5 of 12 ports crossed a threshold at once (more than 33%)"
    # The burst moved the baselines without counting: nothing of it comes back later, in any window.
    for step in range(2, 30):
        busy(feed)
        assert watch.observe(feed.sample(T0_US + step * FIVE_MIN_US)).conditions == ()


def test_a_third_of_the_ports_crossing_is_still_plausible() -> None:
    feed, watch = Feed(NAMES), window()
    watch.observe(feed.sample(T0_US))
    busy(feed)
    for name in NAMES[:4]:
        feed.rows[name].rcv_errors += 1
    assert len(watch.observe(feed.sample(T0_US + FIVE_MIN_US)).conditions) == 4


def test_rows_of_ports_not_watched_are_counted_and_ignored() -> None:
    feed = Feed([*NAMES, *port_names(20)[12:]])
    verdict = window().observe(feed.sample(T0_US))
    assert (verdict.watched, verdict.fresh, verdict.unknown) == (12, 12, 8)


def test_the_history_stays_bounded_at_the_shortest_interval() -> None:
    settings = TelemetrySettings()
    feed, watch = Feed(NAMES), window(settings)
    for step in range(400):  # 400 minutes at 60 s
        watch.observe(feed.sample(T0_US + step * MINUTE_US))
    sizes = [len(history) for history in watch._histories]
    assert sizes[0] <= 12 + 3
    assert sizes[1] <= 25 + 3


def test_bad_construction_is_refused() -> None:
    with pytest.raises(ValueError, match="not a UFM port name"):
        TelemetryWindow(["leaf01/1"], rates=[1.0])
    with pytest.raises(ValueError, match="named twice"):
        TelemetryWindow([NAMES[0], "0x" + NAMES[0].upper()], rates=[1.0, 1.0])
    with pytest.raises(ValueError, match="3 values for 12 ports"):
        TelemetryWindow(NAMES, rates=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="0 or more"):
        TelemetryWindow(NAMES, rates={NAMES[0]: -1.0})
    with pytest.raises(ValueError, match="not a watched port"):
        TelemetryWindow(NAMES, rates={}, cables=[(NAMES[0], "00000000000000ff_1")])
    with pytest.raises(ValueError, match="threshold"):
        BerWindow("x", timedelta(minutes=1), 0.0, timedelta(seconds=1))


def test_rates_by_name() -> None:
    watch = TelemetryWindow(NAMES, rates={NAMES[8].upper(): NDR_BPS}, cables=CABLES)
    assert np.count_nonzero(watch._rates) == 1


def test_errors_past_32_bits_in_one_point_are_a_lower_bound_still_over_the_threshold() -> None:
    feed, watch = Feed(NAMES), window()
    verdicts = []
    for step in range(5):
        verdicts.append(watch.observe(feed.sample(T0_US + step * FIVE_MIN_US)))
        feed.rows[NAMES[8]].symbol_errors += 2**33 if step == 2 else 0
    condition = verdicts[4].conditions[0]
    assert (condition.kind, condition.ports) == (ConditionKind.BER, (NAMES[8],))
    assert condition.figures["symbol_errors"] == 2**32 - 1  # kept in a point: saturated
    assert verdicts[3].conditions[0].figures["symbol_errors"] == 2**33  # not yet in a point: exact
