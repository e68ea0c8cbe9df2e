"""The rules of UFM port writes: the bound and backoff of attempts (``progress``) and settling by reading UFM
(``judge``), as pure functions of the intent log and of what UFM shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric.controller.writes import (
    ANSWERED,
    JOB,
    NO_ANSWER,
    Progress,
    Shown,
    WriteSettings,
    judge,
    progress,
    taken_out_by,
    written_by,
)
from fabric.remediation.domain import ActionKind, ComponentId, ComponentKind
from fabric.store.records import IntentRecord, IntentState
from fabric.ufm.client import PortActionMethod
from fabric.ufm.errors import UfmError, UfmNotFoundError, UfmTimeoutError
from fabric.ufm.models import Job

T0 = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
LINK = ComponentId(ComponentKind.LINK, "leaf01/33|spine02/5")
PORT = "1c34da0300728606_33"
SETTINGS = WriteSettings()
_ids = iter(range(1, 1_000_000))


def intent(kind: ActionKind = ActionKind.DISABLE, state: IntentState = IntentState.FAILED, *, at: datetime = T0,
           finished: datetime | None = None, **payload: Any) -> IntentRecord:
    done = None if state is IntentState.PENDING else (finished or at)
    return IntentRecord(next(_ids), 1, kind, LINK, {"port": PORT, **payload}, state, at, done, None)


def port(state: str) -> Shown:
    """What a read of the port shows a write by disable."""
    return Shown(state == "Disabled", f"UFM shows {PORT} {state}")


def listed(isolated: bool) -> Shown:
    """What a read of the unhealthy ports shows a write by isolate."""
    return Shown(isolated, f"UFM {'lists' if isolated else 'does not list'} {PORT}")


ISOLATE = {"method": PortActionMethod.ISOLATE.value}


def job(status: str) -> Job:
    return Job(ID="17", Status=status, Summary=f"{status} summary")


# --- progress: the bound and the backoff ---------------------------------------------------------------------


def test_nothing_tried_yet_is_due() -> None:
    assert progress([], ActionKind.DISABLE, T0, T0, SETTINGS).status is Progress.DUE


def test_a_write_in_flight_blocks_any_other_write_of_the_component() -> None:
    for kind in (ActionKind.DISABLE, ActionKind.ENABLE):
        pending = intent(kind, IntentState.PENDING, job="17")
        assert progress([pending], ActionKind.DISABLE, T0, T0, SETTINGS).status is Progress.IN_FLIGHT


def test_each_failure_doubles_the_wait_and_the_last_one_gives_up() -> None:
    first = intent(finished=T0)
    state = progress([first], ActionKind.DISABLE, T0, T0 + timedelta(seconds=59), SETTINGS)
    assert (state.status, state.failed, state.due_at) == (Progress.BACKING_OFF, 1, T0 + timedelta(minutes=1))
    assert progress([first], ActionKind.DISABLE, T0, T0 + timedelta(minutes=1), SETTINGS).status is Progress.DUE
    second = intent(at=T0 + timedelta(minutes=1), finished=T0 + timedelta(minutes=2))
    state = progress([second, first], ActionKind.DISABLE, T0, T0 + timedelta(minutes=3), SETTINGS)
    assert (state.status, state.due_at) == (Progress.BACKING_OFF, T0 + timedelta(minutes=4))
    third = intent(at=T0 + timedelta(minutes=4), finished=T0 + timedelta(minutes=5))
    state = progress([first, second, third], ActionKind.DISABLE, T0, T0 + timedelta(days=1), SETTINGS)
    assert (state.status, state.failed) == (Progress.GIVEN_UP, 3)


def test_only_failures_of_this_write_since_the_record_changed_count() -> None:
    since = T0 + timedelta(hours=1)
    old = [intent(at=T0), intent(at=T0), intent(at=T0)]  # an earlier episode of the component
    others = [intent(ActionKind.ENABLE, at=since), intent(ActionKind.TICKET, at=since),
              intent(state=IntentState.DONE, at=since), intent(state=IntentState.ROLLED_BACK, at=since)]
    assert progress(old + others, ActionKind.DISABLE, since, since, SETTINGS).status is Progress.DUE


@given(attempts=st.integers(1, 5), backoff_s=st.integers(1, 600),
       gaps=st.lists(st.integers(1, 900), min_size=1, max_size=80))
def test_posts_are_bounded_by_the_attempts_and_spaced_by_the_backoff(attempts: int, backoff_s: int,
                                                                     gaps: list[int]) -> None:
    """Cycles at any times, every attempt failing at once: at most ``attempts`` posts, the k-th following the
    previous by at least backoff x 2^(k-2), whatever the cycles' rhythm (and so however many cycles there are)."""
    settings = WriteSettings(attempts=attempts, backoff=timedelta(seconds=backoff_s))
    log: list[IntentRecord] = []
    posted: list[datetime] = []
    now = T0
    for gap in gaps:
        now += timedelta(seconds=gap)
        if progress(log, ActionKind.DISABLE, T0, now, settings).status is Progress.DUE:
            posted.append(now)
            log.append(intent(at=now, finished=now))
    assert len(posted) <= attempts
    for k, (before, after) in enumerate(pairwise(posted)):
        assert after - before >= settings.backoff * 2 ** k


# --- judge: settled by reading UFM ---------------------------------------------------------------------------


NOW = T0 + timedelta(seconds=30)
LATE = T0 + SETTINGS.job_deadline


@pytest.mark.parametrize("seen", [job("Running"), job("Completed With Errors"), job("Completed"), None,
                                  UfmNotFoundError("gone")])
def test_what_the_port_shows_decides_whatever_the_job_says(seen: Job | UfmNotFoundError | None) -> None:
    noted = intent(state=IntentState.PENDING, **({JOB: "17"} if seen is not None else {NO_ANSWER: "timed out"}))
    settled = judge(noted, port("Disabled"), seen, NOW, SETTINGS.job_deadline, final=False)
    assert settled.state is IntentState.DONE and "Disabled" in settled.outcome


def test_a_job_still_running_waits_until_its_deadline() -> None:
    running = intent(state=IntentState.PENDING, **{JOB: "17"})
    assert judge(running, port("Link Up"), job("Running"), NOW, SETTINGS.job_deadline, final=False).state is None
    late = judge(running, port("Link Up"), job("Running"), LATE, SETTINGS.job_deadline, final=False)
    assert late.state is IntentState.FAILED and "has not confirmed" in late.outcome and "Running" in late.outcome


def test_a_job_that_ended_without_the_port_changing_fails_at_once() -> None:
    posted = intent(state=IntentState.PENDING, **{JOB: "17"})
    failed = judge(posted, port("Link Up"), job("Completed With Errors"), NOW, SETTINGS.job_deadline, final=False)
    assert failed.state is IntentState.FAILED and "Completed With Errors" in failed.outcome
    gone = judge(posted, port("Link Up"), UfmNotFoundError("no job"), NOW, SETTINGS.job_deadline, final=False)
    assert gone.state is IntentState.FAILED and "no job 17" in gone.outcome
    # A completed job whose port has not changed yet may be UFM's port state lagging: read it again.
    assert judge(posted, port("Link Up"), job("Completed"), NOW, SETTINGS.job_deadline, final=False).state is None


def test_an_unanswered_post_is_read_again_never_resent() -> None:
    lost = intent(state=IntentState.PENDING, **{NO_ANSWER: "timed out"})
    assert judge(lost, port("Link Up"), None, NOW, SETTINGS.job_deadline, final=False).state is None
    late = judge(lost, port("Link Up"), None, LATE, SETTINGS.job_deadline, final=False)
    assert late.state is IntentState.FAILED and "got no answer" in late.outcome


def test_at_start_up_what_may_still_happen_is_settled_for_good_unless_its_outcome_is_unknown() -> None:
    running = intent(state=IntentState.PENDING, **{JOB: "17"})
    assert judge(running, port("Link Up"), job("Running"), NOW, SETTINGS.job_deadline,
                 final=True).state is IntentState.FAILED
    # Never noted: a crash came before UFM's answer (or before the POST). UFM may have taken it and be running
    # its job, so even at start-up it stays in flight until the deadline; then nothing that reached UFM can be
    # counted as an attempt, and it is rolled back.
    unsent = intent(state=IntentState.PENDING)
    for final in (True, False):
        assert judge(unsent, port("Link Up"), None, NOW, SETTINGS.job_deadline, final=final).state is None
        assert judge(unsent, port("Disabled"), None, NOW, SETTINGS.job_deadline,
                     final=final).state is IntentState.DONE
        late = judge(unsent, port("Link Up"), None, LATE, SETTINGS.job_deadline, final=final)
        assert late.state is IntentState.ROLLED_BACK and "not carried out" in late.outcome
        # UFM runs no job on the port's switch: nothing can still carry it out.
        idle = judge(unsent, port("Link Up"), None, NOW, SETTINGS.job_deadline, final=final, switch_idle=True)
        assert idle.state is IntentState.ROLLED_BACK and "runs no job" in idle.outcome


def test_an_unreadable_port_settles_nothing() -> None:
    running = intent(state=IntentState.PENDING, **{JOB: "17"})
    assert judge(running, UfmTimeoutError("slow"), job("Completed"), LATE, SETTINGS.job_deadline,
                 final=True).state is None


def test_an_enable_is_done_when_the_port_is_no_longer_disabled() -> None:
    enable = intent(ActionKind.ENABLE, IntentState.PENDING, **{JOB: "17"})
    assert judge(enable, port("Polling"), job("Running"), NOW, SETTINGS.job_deadline,
                 final=False).state is IntentState.DONE
    assert judge(enable, port("Disabled"), job("Running"), NOW, SETTINGS.job_deadline, final=False).state is None


def test_a_reset_is_done_when_its_job_succeeded_whatever_the_port_shows() -> None:
    """A reset leaves nothing on the port to read: its job alone says it was carried out, and a job that ends
    without success, or UFM has no more, is a reset not carried out."""
    reset = intent(ActionKind.RESET, IntentState.PENDING, **{JOB: "17"})
    for shown in ("Link Up", "Polling", "Disabled"):
        done = judge(reset, port(shown), job("Completed"), NOW, SETTINGS.job_deadline, final=False)
        assert done.state is IntentState.DONE and "the port was reset" in done.outcome
        assert judge(reset, port(shown), job("Running"), NOW, SETTINGS.job_deadline, final=False).state is None
    assert judge(reset, port("Link Up"), job("Aborted"), NOW, SETTINGS.job_deadline,
                 final=False).state is IntentState.FAILED
    assert judge(reset, port("Link Up"), UfmNotFoundError("gone"), NOW, SETTINGS.job_deadline,
                 final=False).state is IntentState.FAILED
    unnoted = intent(ActionKind.RESET, IntentState.PENDING)
    assert judge(unnoted, port("Link Up"), None, NOW, SETTINGS.job_deadline, final=True).state is None
    idle = judge(unnoted, port("Link Up"), None, NOW, SETTINGS.job_deadline, final=True, switch_idle=True)
    assert idle.state is IntentState.ROLLED_BACK and "not counted as done" in idle.outcome


_SEEN = st.sampled_from([job("Running"), job("Completed"), job("Completed With Errors"), job("Aborted"), None,
                         UfmNotFoundError("gone"), UfmTimeoutError("slow")])


@given(seen=_SEEN, state=st.sampled_from(["Disabled", "Link Up", "Polling"]), age=st.integers(0, 900),
       final=st.booleans(), answered=st.booleans())
def test_done_only_when_ufm_shows_it_and_never_failed_while_it_may_still_happen(
        seen: Job | UfmError | None, state: str, age: int, final: bool, answered: bool) -> None:
    noted = intent(state=IntentState.PENDING, **({JOB: "17"} if answered else {NO_ANSWER: "timed out"}))
    job_seen = seen if answered else None
    settled = judge(noted, port(state), job_seen, T0 + timedelta(seconds=age), SETTINGS.job_deadline, final=final)
    assert (settled.state is IntentState.DONE) == (state == "Disabled")
    may_still_happen = job_seen is None or isinstance(job_seen, UfmTimeoutError) or (
        isinstance(job_seen, Job) and not job_seen.failed)
    if settled.state is IntentState.FAILED and may_still_happen:
        assert final or timedelta(seconds=age) >= SETTINGS.job_deadline


# --- isolation: a write that runs no job ------------------------------------------------------------------------


def test_an_isolation_is_done_once_listed_and_failed_at_once_when_ufm_answered_without_listing_it() -> None:
    answered = intent(state=IntentState.PENDING, **ISOLATE, **{ANSWERED: True})
    assert judge(answered, listed(True), None, NOW, SETTINGS.job_deadline, final=False).state is IntentState.DONE
    refused = judge(answered, listed(False), None, NOW, SETTINGS.job_deadline, final=False)
    assert refused.state is IntentState.FAILED and "answered the isolate write" in refused.outcome
    restore = intent(ActionKind.ENABLE, IntentState.PENDING, **ISOLATE, **{ANSWERED: True})
    assert judge(restore, listed(False), None, NOW, SETTINGS.job_deadline, final=False).state is IntentState.DONE
    assert judge(restore, listed(True), None, NOW, SETTINGS.job_deadline, final=False).state is IntentState.FAILED


def test_an_isolation_never_noted_is_rolled_back_once_idle_without_blaming_a_job() -> None:
    unsent = intent(state=IntentState.PENDING, **ISOLATE)
    assert judge(unsent, listed(False), None, NOW, SETTINGS.job_deadline, final=True).state is None
    idle = judge(unsent, listed(False), None, NOW, SETTINGS.job_deadline, final=True, switch_idle=True)
    assert idle.state is IntentState.ROLLED_BACK and "job" not in idle.outcome
    assert judge(unsent, listed(True), None, NOW, SETTINGS.job_deadline, final=True,
                 switch_idle=True).state is IntentState.DONE  # UFM took the PUT before the crash


@given(isolated=st.booleans(), age=st.integers(0, 900), final=st.booleans(),
       noted=st.sampled_from([ANSWERED, NO_ANSWER]))
def test_an_isolation_is_done_only_when_listed_and_an_unanswered_one_waits_for_its_deadline(
        isolated: bool, age: int, final: bool, noted: str) -> None:
    pending = intent(state=IntentState.PENDING, **ISOLATE, **{noted: True if noted == ANSWERED else "timed out"})
    settled = judge(pending, listed(isolated), None, T0 + timedelta(seconds=age), SETTINGS.job_deadline, final=final)
    assert (settled.state is IntentState.DONE) == isolated
    if noted == NO_ANSWER and not isolated:
        assert (settled.state is None) == (timedelta(seconds=age) < SETTINGS.job_deadline)


def test_a_write_says_its_method_and_the_last_take_out_says_how_to_put_back() -> None:
    assert written_by(intent()) is PortActionMethod.DISABLE  # intents from before isolation name none
    assert written_by(intent(**ISOLATE)) is PortActionMethod.ISOLATE
    isolated = intent(state=IntentState.DONE, at=T0, **ISOLATE)
    restored = intent(ActionKind.ENABLE, IntentState.DONE, at=T0 + timedelta(hours=1), **ISOLATE)
    failed = intent(ActionKind.ENABLE, IntentState.FAILED, at=T0 + timedelta(hours=2))
    assert taken_out_by([failed, isolated]) is PortActionMethod.ISOLATE  # newest first; a failed write did nothing
    assert taken_out_by([restored, isolated]) is None  # put back since
    assert taken_out_by([isolated], since=T0 + timedelta(minutes=1)) is None  # before the record's episode
