"""UFM port writes that hold up when UFM misbehaves: posted without waiting, settled by reading UFM, bounded.

A take-out, put-back or reset (``ActionKind.DISABLE``, ``ENABLE``, ``RESET``) is an intent (committed first), then
one write: a reset is ``POST /actions`` reset; a take-out or put-back is made by the intent's method (its
payload's ``method``): ``POST /actions`` disable or enable, or ``PUT /app/unhealthy_ports`` UNHEALTHY (isolate) or
HEALTHY, which UFM answers at once, no job. A job's id goes into the payload. The cycle waits for the jobs it
posted at most ``job_wait``, all of them in one polling loop; what is not finished by then stays pending and is
read again at the end of each later cycle (and at start-up), until ``job_deadline`` after it was posted. Settling
reads UFM (``judge``): the port's state, or the unhealthy-ports list, says whether a take-out or put-back happened,
the job whether it may still happen (a reset leaves nothing to read: its job alone says). A write that got no
answer is settled the same way, by reading UFM, never by sending it again.

A write UFM did not confirm is an attempt. Attempts are counted from the intent log (failed intents of the
component's write since its record's ``since``), so a restart resets nothing: the next attempt waits ``backoff``,
doubled after each failure, and after ``attempts`` of them the write is given up (``progress``). A reset leaves
no state on the port to read: its job says whether it was carried out, and it is never sent again
(``fabric.controller.resets``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import NamedTuple

from fabric.controller.effects import UFM_WRITES, CycleReport, UfmApi
from fabric.controller.ports_out import Listing, PortsOut, listings
from fabric.errors import ErrorKind
from fabric.remediation.domain import Action, ActionKind, ComponentId, ComponentRecord
from fabric.store import Store
from fabric.store.records import IntentRecord, IntentState
from fabric.ufm.client import PortActionMethod, PostedAction
from fabric.ufm.errors import UfmError, UfmNotFoundError, UfmOutcomeUnknownError
from fabric.ufm.models import Job
from fabric.ufm.objects import normalize_guid

log = logging.getLogger(__name__)

JOB = "job"
"""Payload key: UFM's job id, noted once the POST was answered."""
NO_ANSWER = "no_answer"
"""Payload key: why the POST got no usable answer (its outcome is unknown)."""
WAITED_FOR = "waited_for"
"""Payload key: the job of an earlier attempt that UFM still ran, so this attempt was not sent."""
ANSWERED = "answered"
"""Payload key: UFM answered the write, which runs no job (an unhealthy-ports change, carried out as answered)."""
GIVEN_UP_RULE = "write_unconfirmed"
"""The rule of the decision recorded when a write is given up."""


@dataclass(frozen=True, slots=True)
class WriteSettings:
    """How UFM port writes are bounded (``[ufm]`` in the configuration)."""

    attempts: int = 3
    """Writes of one component UFM may leave unconfirmed before automation gives up on it."""
    backoff: timedelta = timedelta(minutes=1)
    """The wait before the second attempt; doubled before each further one."""
    job_wait: timedelta = timedelta(seconds=10)
    """How long a cycle waits for the jobs it posted before it moves on (they are read again later)."""
    job_deadline: timedelta = timedelta(minutes=5)
    """A job not finished this long after its POST (or a POST not answered) is an attempt UFM did not confirm."""

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("WriteSettings.attempts must be at least 1")


class Progress(StrEnum):
    DUE = "due"
    """Nothing in flight and an attempt left: post it."""
    IN_FLIGHT = "in_flight"
    """A write of the component is posted and not settled yet: read UFM, send nothing."""
    BACKING_OFF = "backing_off"
    """The last attempt was not confirmed; the next is not due yet."""
    GIVEN_UP = "given_up"
    """``attempts`` writes were not confirmed: nothing more is sent."""


@dataclass(frozen=True, slots=True)
class WriteProgress:
    status: Progress
    failed: int = 0
    """Attempts UFM did not confirm since the component's record changed."""
    due_at: datetime | None = None
    """When the next attempt is due (backing off)."""


def progress(intents: Iterable[IntentRecord], kind: ActionKind, since: datetime, now: datetime,
             settings: WriteSettings) -> WriteProgress:
    """Where a component's write of ``kind`` stands, from its intents (any order): the bound and the backoff."""
    failed: list[datetime] = []
    for intent in intents:
        if intent.kind not in UFM_WRITES:
            continue
        if intent.state is IntentState.PENDING:
            return WriteProgress(Progress.IN_FLIGHT)
        if intent.kind is kind and intent.state is IntentState.FAILED and intent.created_at >= since:
            failed.append(intent.finished_at or intent.created_at)
    if len(failed) >= settings.attempts:
        return WriteProgress(Progress.GIVEN_UP, len(failed))
    if failed:
        due_at = max(failed) + settings.backoff * 2 ** (len(failed) - 1)
        if now < due_at:
            return WriteProgress(Progress.BACKING_OFF, len(failed), due_at)
    return WriteProgress(Progress.DUE, len(failed))


def written_by(intent: IntentRecord) -> PortActionMethod:
    """The method of a port write's intent (those written before isolation was supported say none: disables)."""
    return PortActionMethod(intent.payload.get("method", PortActionMethod.DISABLE.value))


_OUT_AND_BACK = (ActionKind.DISABLE, ActionKind.ENABLE)


def taken_out_by(intents: Iterable[IntentRecord], since: datetime | None = None) -> PortActionMethod | None:
    """How automation took the component of ``intents`` (newest first) out, when the newest take-out or put-back
    it carried out (since ``since``) took it out; ``None``: automation holds nothing of it out in UFM."""
    for intent in intents:
        if intent.kind in _OUT_AND_BACK and intent.state is IntentState.DONE:
            taken_out = intent.kind is ActionKind.DISABLE and (since is None or intent.created_at >= since)
            return written_by(intent) if taken_out else None
    return None


def last_taken_out(store: Store, component: ComponentId, since: datetime | None = None) -> PortActionMethod | None:
    """``taken_out_by`` from ``component``'s take-outs and put-backs in the intent log."""
    return taken_out_by(store.intents(component=component, kinds=_OUT_AND_BACK), since)


class Shown(NamedTuple):
    """What UFM shows of a port write's port, by the write's method."""

    out: bool
    """Out of service by that method: disabled, or listed isolated."""
    text: str
    """What it shows, for the intent's outcome (``UFM shows <port> Disabled``)."""


class Settlement(NamedTuple):
    state: IntentState | None
    """How the intent ends; ``None``: not settled yet, read UFM again later."""
    outcome: str


def judge(intent: IntentRecord, seen: Shown | UfmError, job: Job | UfmError | None, now: datetime,
          deadline: timedelta, *, final: bool, switch_idle: bool = False) -> Settlement:
    """How a pending port write ends, from what UFM shows: the port by the write's method, and its job (``None``:
    no job is known).

    The port decides: in the wanted state, the write is done, whatever the job says (a reset leaves nothing on the
    port: it is done when its job succeeded). Otherwise the write fails once nothing can make it happen any more
    (the job ended, UFM has no such job, UFM answered a write that runs no job, or ``deadline`` passed since the
    intent was written); until then it stays pending. ``final`` (at start-up, after waiting for the jobs) settles
    a job still running as failed.

    Without a job id the outcome is unknown whatever ``final`` says, so the intent stays pending until
    ``deadline``: a POST that got no answer, or one whose answer was never noted because a crash came first, may
    have started a job that is still running, and settling it early rolled back a disable UFM then carried out
    (the component deferred while UFM showed its port disabled), or let reconciliation post it a second time.
    At the deadline, an unanswered POST is an attempt UFM did not confirm; one never noted is rolled back (a
    crash before the POST left the service nothing it can count as an attempt). ``switch_idle``: UFM runs no job on
    the port's switch, so no job of this write can still change the port, and one never noted is rolled back at
    once (waiting out the deadline for a POST that never left delayed the write, and a re-enable waited on was
    judged a failed repair); an unhealthy-ports change runs no job, so one of those is idle once it is doubtful.
    """
    name = intent.payload.get("port", "?")
    if isinstance(seen, UfmError):
        return Settlement(None, f"cannot read port {name}: {seen.summary}")
    shown = seen.text
    job_id = intent.payload.get(JOB)
    if intent.kind is ActionKind.RESET:  # it leaves no trace on the port: its job alone says it was carried out
        if isinstance(job, Job) and job.succeeded:
            return Settlement(IntentState.DONE, f"UFM job {job_id} ended {job.Status!r}: the port was reset; {shown}")
    elif seen.out == (intent.kind is ActionKind.DISABLE):
        return Settlement(IntentState.DONE, shown)
    if intent.payload.get(ANSWERED):
        return Settlement(IntentState.FAILED, f"UFM answered the {written_by(intent).value} write and {shown}")
    if isinstance(job, Job) and job.failed:
        return Settlement(IntentState.FAILED, f"UFM job {job_id} ended {job.Status!r} ({job.Summary!r}); {shown}")
    if job_id is not None and isinstance(job, UfmNotFoundError):
        return Settlement(IntentState.FAILED, f"UFM has no job {job_id} any more; {shown}")
    age = _age(now - intent.created_at)
    expired = now - intent.created_at >= deadline
    if _unnoted(intent):
        if switch_idle:
            if intent.kind is ActionKind.RESET:
                return Settlement(IntentState.ROLLED_BACK, f"no job of it is known and UFM runs none on {name}'s "
                                                           "switch: not counted as done")
            jobless = written_by(intent) is PortActionMethod.ISOLATE  # its write runs no job at all
            return Settlement(IntentState.ROLLED_BACK, f"not carried out: {shown}"
                                                       + ("" if jobless else " and runs no job on its switch"))
        if not expired:
            return Settlement(None, f"the {intent.kind.value} was sent {age} ago, no answer was noted (a restart "
                                    f"came first) and {shown}: a job UFM started may still carry it out")
        return Settlement(IntentState.ROLLED_BACK, f"not carried out: {shown} {age} after it was sent")
    if job_id is None:
        waiting = f"the {intent.kind.value} got no answer ({intent.payload[NO_ANSWER]}) and {shown}"
    elif isinstance(job, Job):
        waiting = f"UFM job {job_id} is {job.Status!r} and {shown}"
    else:
        waiting = f"UFM job {job_id} cannot be read ({job.summary if job else 'not read'}) and {shown}"
    if not expired and (not final or job_id is None):
        return Settlement(None, waiting)
    return Settlement(IntentState.FAILED, f"UFM has not confirmed it: {waiting} {age} after it was sent")


def _unnoted(intent: IntentRecord) -> bool:
    """No answer to the write was noted: a crash came before it, or before the write itself."""
    return not any(key in intent.payload for key in (JOB, ANSWERED, NO_ANSWER))


def _age(age: timedelta) -> str:
    return f"{max(0, round(age.total_seconds()))}s"


PortWrite = Callable[[ComponentId, ActionKind], None]
"""Told of a port write when it is sent, when UFM answers and when it is settled done: the link events UFM
reports around those times are the write's effect (the detectors' own-action window)."""


_NOTE_CHARS = 500
"""The longest description the service puts in UFM's event log (UFM's own limit is not documented)."""


class PortWrites:
    """Take-outs and put-backs of ports in UFM, each an intent: posted (``post``), then settled (``settle``).
    A port is taken out by the configured ``method``, and put back the way automation took it out."""

    def __init__(self, store: Store, ufm: UfmApi, settings: WriteSettings, *, epoch: int,
                 method: PortActionMethod, on_port_write: PortWrite) -> None:
        self.store, self.ufm, self.settings, self.epoch, self.method = store, ufm, settings, epoch, method
        self.on_port_write = on_port_write
        self._posted: list[str] = []
        """Jobs posted since the last ``settle``: the ones it waits for."""

    def progress(self, component: ComponentId, kind: ActionKind, since: datetime, now: datetime) -> WriteProgress:
        return progress(self.store.intents(component=component), kind, since, now, self.settings)

    def method_for(self, kind: ActionKind, component: ComponentId) -> PortActionMethod:
        """How a write of ``kind`` is made: a take-out by the configured method; a put-back the way automation last
        took the component out (a port it disabled before the method became ``isolate`` is enabled, and an
        isolation someone else made is not undone), by the configured method when the intent log says none."""
        if kind is ActionKind.DISABLE:
            return self.method
        return last_taken_out(self.store, component) or self.method

    async def still_running(self, component: ComponentId, kind: ActionKind) -> str | None:
        """The job of ``component``'s last unconfirmed write of ``kind`` when UFM still runs it (``None``
        otherwise): a retry then would be a second job on one port, racing the first."""
        for intent in self.store.intents(component=component, limit=20):
            if intent.kind not in UFM_WRITES:
                continue
            job_id = intent.payload.get(JOB, intent.payload.get(WAITED_FOR))
            if intent.kind is not kind or intent.state is not IntentState.FAILED or job_id is None:
                return None
            job = (await self.ufm.await_jobs([str(job_id)], within=0)).get(str(job_id))
            return str(job_id) if isinstance(job, Job) and job.in_progress else None
        return None

    def wait_out(self, action: Action, port: str, job: str, records: Mapping[ComponentId, ComponentRecord],
                 now: datetime, report: CycleReport) -> None:
        """The attempt ``action`` would make, not sent because UFM still runs ``job`` of the last one: a second job
        would race the first on one port. It is logged as an attempt UFM did not confirm, so the backoff and the
        bound on attempts go on as if it had been sent: a job stuck for good ends in the write given up, with one
        job posted, not ``attempts`` of them."""
        assert action.component is not None
        method = self.method_for(action.kind, action.component)
        intent = self.store.begin_intent(self.epoch, action.kind, action.component,
                                         {"port": port, "method": method.value, WAITED_FOR: job})
        outcome = f"not sent: UFM still runs job {job} of the last attempt"
        finished = self.store.finish_intent(intent, IntentState.FAILED, outcome)
        self._unconfirmed(finished, outcome, records, now, report)

    async def post(self, action: Action, port: str, out: PortsOut, report: CycleReport) -> None:
        """Send ``action``'s take-out, put-back or reset of ``port`` (its intent logged first), without waiting for
        UFM to carry it out. ``out`` follows UFM when it showed the port so already (nothing sent, done)."""
        kind = action.kind
        assert action.component is not None
        method = self.method_for(kind, action.component)
        intent = self.store.begin_intent(self.epoch, kind, action.component, {"port": port, "method": method.value})
        self.on_port_write(action.component, kind)
        try:
            if kind is ActionKind.RESET:
                posted = await self.ufm.post_port_action(port, kind.value)
            else:
                write = self.ufm.take_out if kind is ActionKind.DISABLE else self.ufm.put_back
                posted = await write(port, method)
        except UfmOutcomeUnknownError as exc:
            self.store.note_intent(intent, {NO_ANSWER: exc.summary})
            log.warning("%s of %s (%s): the outcome is unknown, it will be settled by reading UFM, not sent again: %s",
                        kind.value, action.component, port, exc.summary)
            return
        except UfmError as exc:
            self.store.finish_intent(intent, IntentState.FAILED, str(exc))
            report.fail(ErrorKind.UFM, kind.value, action.component, exc)
            log.warning("%s of %s (%s) failed: %s", kind.value, action.component, port, exc)
            return
        self.on_port_write(action.component, kind)
        if not posted.sent:
            self.store.finish_intent(intent, IntentState.DONE, f"UFM already shows {port} {posted.port.physical_state}")
            report.executed += 1
            out.note_disabled(port, kind is ActionKind.DISABLE)
            return
        if posted.job_id is None:
            self.store.note_intent(intent, {ANSWERED: True})
        else:
            self.store.note_intent(intent, {JOB: posted.job_id})
            self._posted.append(posted.job_id)
        await self._tell_ufm(action, posted)

    async def _tell_ufm(self, action: Action, posted: PostedAction) -> None:
        """Put the write in UFM's own event log (an informational external event, 551), where operators who watch
        UFM look: best effort, never retried, never a reason to doubt the write. The detectors read no rule from
        551, so the service does not count its own note when it reads the log back."""
        reason = " ".join(action.reason.split())
        note = (f"fabric-remediation: {posted.action} {posted.port_name} ({action.component}), {action.rule}: "
                f"{reason}")
        try:
            await self.ufm.external_event(note[:_NOTE_CHARS], object_name=posted.port.system_guid)
        except UfmError as exc:
            log.info("could not report the %s of %s to UFM's event log: %s", posted.action, posted.port_name, exc)

    async def settle(self, now: datetime, records: Mapping[ComponentId, ComponentRecord], out: PortsOut,
                     report: CycleReport) -> None:
        """Settle every pending write by reading UFM; the jobs posted since the last call are waited for
        together, at most ``job_wait``. ``out`` follows the ports read."""
        posted, self._posted = self._posted, []
        await self._settle(self._pending(), now, records, out, report, posted, self.settings.job_wait, final=False)

    async def recover(self, now: datetime, records: Mapping[ComponentId, ComponentRecord], out: PortsOut) -> None:
        """At start-up: wait for the jobs a previous run posted, each until its deadline, and settle every
        pending write for good, unless its port cannot be read or no job id was noted for it (``judge``: those
        stay in flight until their deadline, settled by the cycles)."""
        pending = self._pending()
        wait = max((self.settings.job_deadline - (now - i.created_at) for i in pending if JOB in i.payload),
                   default=timedelta())
        jobs = [str(i.payload[JOB]) for i in pending if JOB in i.payload]
        await self._settle(pending, now, records, out, CycleReport(now), jobs, max(wait, timedelta()), final=True)

    def _pending(self) -> list[IntentRecord]:
        return [i for i in self.store.unfinished_intents() if i.kind in UFM_WRITES and i.payload.get("port")]

    async def _settle(self, pending: Sequence[IntentRecord], now: datetime,
                      records: Mapping[ComponentId, ComponentRecord], out: PortsOut, report: CycleReport,
                      awaited: Sequence[str], wait: timedelta, *, final: bool) -> None:
        if not pending:
            return
        jobs = await self.ufm.await_jobs(awaited, within=wait.total_seconds()) if awaited else {}
        others = [str(i.payload[JOB]) for i in pending if JOB in i.payload and str(i.payload[JOB]) not in jobs]
        if others:
            jobs = {**jobs, **await self.ufm.await_jobs(others, within=0)}
        busy = await self._busy_switches(pending, now)
        listing = _Listing(self.ufm)
        for intent in pending:
            name = str(intent.payload["port"])
            seen: Shown | UfmError
            if written_by(intent) is PortActionMethod.ISOLATE:
                seen = await listing.shown(name, out)
                idle = self._doubtful(intent, now)  # the write runs no job that could still carry it out
            else:
                try:
                    port = await self.ufm.port(name)
                except UfmError as exc:
                    seen, idle = exc, False
                else:
                    out.note_disabled(name, port.is_disabled)
                    seen = Shown(port.is_disabled, f"UFM shows {name} {port.physical_state}")
                    idle = busy is not None and self._doubtful(intent, now) and port.system_guid is not None \
                        and port.system_guid not in busy
            job_id = intent.payload.get(JOB)
            settled = judge(intent, seen, None if job_id is None else jobs.get(str(job_id)), now,
                            self.settings.job_deadline, final=final, switch_idle=idle)
            if settled.state is None:
                report.writes_pending += 1
                if final:
                    log.warning("intent %s stays in flight: %s", intent.id, settled.outcome)
                continue
            self.store.finish_intent(intent.id, settled.state, settled.outcome)
            if settled.state is IntentState.DONE:
                report.executed += 1
                if intent.component is not None:
                    self.on_port_write(intent.component, intent.kind)
            elif settled.state is IntentState.FAILED:
                self._unconfirmed(intent, settled.outcome, records, now, report)

    def _doubtful(self, intent: IntentRecord, now: datetime) -> bool:
        """No answer of the write was noted, and a write still on its way to UFM would have arrived by now."""
        return _unnoted(intent) and now - intent.created_at >= self.settings.job_wait

    async def _busy_switches(self, pending: Sequence[IntentRecord], now: datetime) -> set[str] | None:
        """The switches UFM runs jobs on, read only when a write whose answer was never noted is at least
        ``job_wait`` old (a POST still on its way to UFM after that long is not to be expected); ``None``: not read,
        or UFM did not answer (the writes then wait for their deadline)."""
        if not any(self._doubtful(i, now) and written_by(i) is PortActionMethod.DISABLE for i in pending):
            return None
        try:
            running = await self.ufm.running_jobs()
        except UfmError as exc:
            log.info("cannot read UFM's running jobs: %s", exc.summary)
            return None
        busy: set[str] = set()
        for job in running:
            for related in job.RelatedObjects:
                try:
                    busy.add(normalize_guid(related))
                except ValueError:
                    return None  # a job on something this cannot place: it may be the port's
        return busy

    def _unconfirmed(self, intent: IntentRecord, outcome: str, records: Mapping[ComponentId, ComponentRecord],
                     now: datetime, report: CycleReport) -> None:
        """An attempt UFM did not confirm: say so, and what comes next (another attempt later, or none)."""
        component, kind = intent.component, intent.kind
        report.fail(ErrorKind.UFM, kind.value, component, outcome)
        record = records.get(component) if component is not None else None
        if component is None or record is None:
            log.warning("%s %s: %s", kind.value, component, outcome)
            return
        if kind is ActionKind.RESET:
            log.warning("reset of %s not carried out: %s; the policy takes it out", component, outcome)
            return
        state = self.progress(component, kind, record.since, now)
        limit = self.settings.attempts
        if state.status is Progress.GIVEN_UP:
            report.writes_given_up += 1
            reason = (f"UFM has not confirmed the {kind.value} of {component} in {limit} attempts, the last: "
                      f"{outcome}; nothing more is sent until its ticket is resolved or the component changes state")
            log.warning("%s", reason)
            self.store.record_decision(Action(ActionKind.RECORD, now, GIVEN_UP_RULE, reason, component,
                                              {"attempts": limit}, dry_run=False))
        else:
            report.writes_backing_off += 1
            due = state.due_at.isoformat() if state.due_at else "now"
            log.warning("%s of %s: attempt %d of %d not confirmed: %s; the next attempt is due at %s", kind.value,
                        component, state.failed, limit, outcome, due)


class _Listing:
    """``/app/unhealthy_ports`` read once for the isolation writes one settling judges (the list names every port
    marked, however many of them are pending)."""

    def __init__(self, ufm: UfmApi) -> None:
        self.ufm = ufm
        self._read: list[Listing] | UfmError | None = None

    async def shown(self, port: str, out: PortsOut) -> Shown | UfmError:
        """Whether UFM lists ``port`` isolated; ``out`` follows what the list says of it."""
        if self._read is None:
            try:
                self._read = list(listings(await self.ufm.unhealthy_ports()))
            except UfmError as exc:
                self._read = exc
        if isinstance(self._read, UfmError):
            return self._read
        out.note_listed(port, self._read)
        if out.shows(port, PortActionMethod.ISOLATE):
            return Shown(True, f"UFM lists {port} unhealthy, marked by hand (MANUAL)")
        return Shown(False, f"UFM does not list {port} as marked unhealthy")
