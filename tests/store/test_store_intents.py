"""The write-ahead intent log: begin/finish, survival across a crash, epoch fencing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_helpers import Db, FakeClock

from fabric.remediation.domain import ActionKind, ComponentId, ComponentKind
from fabric.store import IntentState, InvalidTransitionError, StaleEpochError, Store

LINK = ComponentId(ComponentKind.LINK, "leaf01/33|spine02/5")
REPO = Path(__file__).resolve().parents[2]


def test_begin_and_finish(store: Store, clock: FakeClock) -> None:
    intent_id = store.begin_intent(3, ActionKind.DISABLE, LINK, {"ufm_port": "0x1234_33", "attempt": 1})
    [pending] = store.unfinished_intents()
    assert pending.id == intent_id
    assert pending.epoch == 3
    assert pending.kind is ActionKind.DISABLE
    assert pending.component == LINK
    assert pending.payload == {"ufm_port": "0x1234_33", "attempt": 1}
    assert pending.state is IntentState.PENDING
    assert pending.created_at == clock.now
    assert pending.finished_at is None

    later = clock.advance(seconds=4)
    done = store.finish_intent(intent_id, IntentState.DONE, "UFM job 17 completed")
    assert done.state is IntentState.DONE
    assert done.finished_at == later
    assert done.outcome == "UFM job 17 completed"
    assert store.unfinished_intents() == []
    assert store.get_intent(intent_id) == done


def test_intent_without_component(store: Store) -> None:
    intent_id = store.begin_intent(1, ActionKind.HALT, None)
    intent = store.get_intent(intent_id)
    assert intent is not None
    assert intent.component is None
    assert intent.payload == {}


def test_finishing_is_idempotent_but_not_revisable(store: Store) -> None:
    intent_id = store.begin_intent(1, ActionKind.ENABLE, LINK)
    store.finish_intent(intent_id, IntentState.FAILED, "UFM 503")
    again = store.finish_intent(intent_id, IntentState.FAILED, "UFM 503 (recovery)")
    assert again.outcome == "UFM 503"  # the first outcome stays
    with pytest.raises(InvalidTransitionError, match="already failed"):
        store.finish_intent(intent_id, IntentState.DONE)
    with pytest.raises(ValueError, match="finishes as"):
        store.finish_intent(intent_id, IntentState.PENDING)
    with pytest.raises(InvalidTransitionError, match="no intent"):
        store.finish_intent(12345, IntentState.DONE)


def test_a_pending_intent_takes_notes_a_finished_one_refuses_them(store: Store) -> None:
    intent_id = store.begin_intent(1, ActionKind.DISABLE, LINK, {"port": "0x1234_33"})
    noted = store.note_intent(intent_id, {"job": "17"})
    assert noted.payload == {"port": "0x1234_33", "job": "17"} and noted.state is IntentState.PENDING
    [pending] = store.unfinished_intents()
    assert pending.payload == {"port": "0x1234_33", "job": "17"}  # stored, for whoever settles it after a crash
    store.finish_intent(intent_id, IntentState.DONE)
    with pytest.raises(InvalidTransitionError, match="already done"):
        store.note_intent(intent_id, {"job": "18"})
    with pytest.raises(InvalidTransitionError, match="no intent"):
        store.note_intent(intent_id + 100, {"job": "18"})


def test_unfinished_intents_are_oldest_first(store: Store) -> None:
    ids = [store.begin_intent(1, ActionKind.DISABLE, LINK, {"n": n}) for n in range(5)]
    store.finish_intent(ids[1], IntentState.DONE)
    store.finish_intent(ids[3], IntentState.ROLLED_BACK)
    assert [i.id for i in store.unfinished_intents()] == [ids[0], ids[2], ids[4]]
    assert [i.id for i in store.intents(limit=2)] == [ids[4], ids[3]]
    assert len(store.intents(component=LINK)) == 5


def test_intents_survive_closing_the_store(db: Db) -> None:
    first = db.open()
    kept = first.begin_intent(2, ActionKind.DISABLE, LINK, {"port": 33})
    finished = first.begin_intent(2, ActionKind.TICKET, LINK)
    first.finish_intent(finished, IntentState.DONE)
    first.close()  # the process "stops" between begin and finish

    second = db.open()
    assert [(i.id, i.payload) for i in second.unfinished_intents()] == [(kept, {"port": 33})]


CRASHING_WRITER = textwrap.dedent(
    """
    import os, sys
    from fabric.remediation.domain import ActionKind, ComponentId
    from fabric.store import IntentState, Store

    url, schema = sys.argv[1], sys.argv[2] or None
    store = Store.open(url, schema=schema)
    link = ComponentId.parse("link:leaf01/33|spine02/5")
    a = store.begin_intent(9, ActionKind.DISABLE, link, {"port": 33})
    b = store.begin_intent(9, ActionKind.TICKET, link)
    store.finish_intent(b, IntentState.DONE, "LOCAL-1")
    row, created = store.claim_ticket("ibdedup-crash", backend="local", summary="bad link", component=link)
    c = store.begin_intent(9, ActionKind.ENABLE, link)
    print(a, c, row.id, flush=True)
    os._exit(137)  # a hard crash: no commit of anything pending, no close, no cleanup
    """
)


def test_intents_and_claims_survive_a_hard_crash(db: Db) -> None:
    db.open().close()  # create the schema first, as the daemon's previous run would have
    result = subprocess.run(
        [sys.executable, "-c", CRASHING_WRITER, db.url, db.schema or ""],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert result.returncode == 137, result.stderr
    pending_a, pending_c, ticket_id = (int(x) for x in result.stdout.split())

    store = db.open()
    assert [i.id for i in store.unfinished_intents()] == [pending_a, pending_c]
    assert all(i.epoch == 9 for i in store.unfinished_intents())
    row, created = store.claim_ticket("ibdedup-crash", backend="local", summary="bad link")
    assert (row.id, created) == (ticket_id, False)


def test_stale_epoch_is_fenced(store: Store) -> None:
    assert store.newest_epoch() is None
    store.begin_intent(4, ActionKind.DISABLE, LINK)
    store.begin_intent(4, ActionKind.TICKET, LINK)
    store.begin_intent(5, ActionKind.ENABLE, LINK)  # a new leader took over
    assert store.newest_epoch() == 5
    with pytest.raises(StaleEpochError, match="epoch 4 is stale") as info:
        store.begin_intent(4, ActionKind.DISABLE, LINK)
    assert (info.value.epoch, info.value.newest) == (4, 5)
    # The new leader may still finish (roll back) what the old one left.
    old = store.unfinished_intents()[0]
    assert store.finish_intent(old.id, IntentState.ROLLED_BACK, "not applied in UFM").state is IntentState.ROLLED_BACK
