"""UFM Telemetry read once an interval and judged against the fabric as the engine sees it.

The feed fetches a sample (``fabric.ufm.telemetry``), parses it and has the window judge it (``fabric.telemetry``);
the engine hands an accepted sample's conditions to the next cycle's pipeline. A sample that cannot be used acts
on nothing and says why, as a REST reading that cannot be true does: UFM Telemetry out of reach, a body that is
not UFM Telemetry's CSV (one line naming the line and column), a sample whose time did not move (stale), one
missing ports (partial) or one in which a third of the fabric crossed a threshold at once (implausible). Each
outcome is one ``SampleOutcome`` for the log, a metric and ``/status``.

The window is made for the ports of the fabric as the engine last accepted it (``FabricView.watched``), and made
again only when a view lists a port it does not watch (a GUID replaced, a cable added): its history starts again
then, as it would for a replaced port. A view that lost ports for a while (a switch rebooting) keeps it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from fabric.remediation.view import FabricView, Watched
from fabric.telemetry.errors import TelemetryInputError
from fabric.telemetry.records import SampleVerdict, Verdict
from fabric.telemetry.settings import TelemetrySettings
from fabric.ufm.errors import UfmError

if TYPE_CHECKING:  # numpy and pyarrow are imported when the first sample is judged, not with the engine
    from fabric.telemetry.sample import Sample
    from fabric.telemetry.window import TelemetryWindow

log = logging.getLogger(__name__)

REFUSED = "refused"
"""A sample whose body is not UFM Telemetry's CSV (or whose time went backwards): skipped."""
UNREACHABLE = "unreachable"
"""No sample could be read (UFM Telemetry down, an error answer, a body past ``max_bytes``)."""
TELEMETRY_OUTCOMES = (*(verdict.value for verdict in Verdict), REFUSED, UNREACHABLE)
"""Every outcome of an attempt to read a sample."""


@dataclass(frozen=True, slots=True)
class SampleOutcome:
    """What became of one attempt to read a sample."""

    read_at: datetime
    outcome: str
    """The gate's verdict (``accepted``, ``stale``, ``partial``, ``implausible``), ``refused`` or ``unreachable``."""
    reason: str
    """One line: what was judged, or why the sample acts on nothing."""
    sample_time: datetime | None = None
    """The sample's own time (``None`` when none was read)."""
    conditions: int = 0
    """Conditions found (an accepted sample's only)."""


class TelemetryFeed:
    def __init__(self, read: Callable[[], Awaitable[bytes]], settings: TelemetrySettings, source: str, *,
                 interval: timedelta, close: Callable[[], Awaitable[None]] | None = None) -> None:
        """``read``: one sample's body (``TelemetryClient.sample``); ``source``: how log lines and refusals name
        it (the URL); ``interval``: how often a sample is read (``due``)."""
        self._read, self._close = read, close
        self.settings, self.source, self.interval = settings, source, interval
        self._last_read: datetime | None = None
        self._window: TelemetryWindow | None = None
        self._watched: Watched | None = None
        """What the window was made for."""
        self._seen: Watched | None = None
        """The last view's ports (the same object while the view is: nothing to compare)."""
        self._ports: frozenset[str] = frozenset()
        self._cables: frozenset[tuple[str, str]] = frozenset()

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()

    def due(self, now: datetime) -> bool:
        """Whether a sample is to be read at ``now``: an interval after the last attempt, whatever became of it (a
        UFM Telemetry that does not answer is asked again an interval later, not at every cycle)."""
        return self._last_read is None or now - self._last_read >= self.interval

    async def poll(self, view: FabricView, now: datetime, *,
                   keep: Callable[[Sample], None] | None = None) -> tuple[SampleOutcome, SampleVerdict | None]:
        """Read, parse and judge one sample; the verdict only for an accepted sample (with conditions or not: the
        policy learns from it how far telemetry has judged). ``keep``: handed every sample whose time moved,
        whatever the gate made of its thresholds (a burn-in window's packet counts: ``partial`` or
        ``implausible`` says nothing against the ports it holds)."""
        from fabric.telemetry.parse import parse_sample

        self._last_read = now
        try:
            body = await self._read()
        except UfmError as exc:
            return self._said(SampleOutcome(now, UNREACHABLE, f"unreachable: no sample read: {exc}")), None
        try:
            sample = parse_sample(body, self.source)
            verdict = self._window_for(view).observe(sample)
        except TelemetryInputError as exc:
            return self._said(SampleOutcome(now, REFUSED, f"refused: sample skipped: {exc}")), None
        if keep is not None and verdict.verdict is not Verdict.STALE:
            keep(sample)
        outcome = self._said(SampleOutcome(now, verdict.verdict.value, verdict.reason, verdict.time,
                                           len(verdict.conditions)))
        return outcome, verdict if verdict.verdict is Verdict.ACCEPTED else None

    def _window_for(self, view: FabricView) -> TelemetryWindow:
        from fabric.telemetry.window import TelemetryWindow

        watched = view.watched()
        if self._window is None or (watched is not self._seen and not self._covers(watched)):
            if self._window is not None:
                log.info("UFM Telemetry: the fabric's ports changed: the counters' history starts again")
            self._window = TelemetryWindow(watched.ports, rates=watched.rates, cables=watched.cables,
                                           settings=self.settings)
            self._watched = watched
            self._ports, self._cables = frozenset(watched.ports), frozenset(watched.cables)
        self._seen = watched
        return self._window

    def _covers(self, watched: Watched) -> bool:
        """Whether the window already watches every port and cable of ``watched``, at the same rates: a view that
        lost ports for a while (a switch rebooting: UFM lists its ports again once it is back) keeps the history
        of all the others, and of those when they come back; only a port the window does not know (a GUID
        replaced, a cable added) makes it again."""
        kept = self._watched
        assert kept is not None
        return (self._ports.issuperset(watched.ports) and self._cables.issuperset(watched.cables)
                and all(kept.rates[port] == rate for port, rate in watched.rates.items()))

    @staticmethod
    def _said(outcome: SampleOutcome) -> SampleOutcome:
        if outcome.outcome == Verdict.ACCEPTED:
            log.info("UFM Telemetry sample accepted: %s", outcome.reason)
        else:  # the reason starts with the outcome: "stale: ...", "refused: ..."
            log.warning("UFM Telemetry sample acts on nothing: %s", outcome.reason)
        return outcome
