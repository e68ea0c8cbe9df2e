"""Numbers and times beyond what the store or Python holds are refused where they enter: 422 naming the field,
nothing stored, never a 500 (issue 21, class 3). Served over real HTTP on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from api_support import TOKEN

from fabric.bounded import MAX_ROW
from fabric.store import Store

AUTH = {"Authorization": f"Bearer {TOKEN}"}
WHY = {"reason": "CHG-7 firmware", "by": "alice"}
FAR = "9999-12-31T23:59:59-14:00"
"""Year 9999 west of UTC: past the end of ``datetime`` once converted to UTC."""


@pytest.mark.usefixtures("token")
@pytest.mark.parametrize(("method", "path", "params", "body", "detail"), [
    ("DELETE", f"/silences/{2**64}", {"by": "a", "reason": "b"}, None,
     f"silence_id: Input should be less than or equal to {MAX_ROW}"),
    ("DELETE", "/silences/0", {"by": "a", "reason": "b"}, None, "silence_id: Input should be greater than or equal"),
    ("GET", "/components", {"offset": str(2**64)}, None, f"offset: Input should be less than or equal to {MAX_ROW}"),
    ("GET", "/decisions", {"since": FAR}, None, f"since: {FAR} is not between 1970-01-01 and 3000-01-01 (UTC)"),
    ("GET", "/decisions", {"until": "0001-01-01T00:00:00+14:00"}, None, "until: 0001-01-01T00:00:00+14:00 is not"),
    ("GET", "/decisions", {"since": "1700000000"}, None, "since: not a time: '1700000000'"),
    ("GET", "/silences", {"ended_since": FAR}, None, f"ended_since: {FAR} is not between"),
    ("POST", "/silences", None, {"ends_at": "9999-12-31T23:59:59+00:00"}, "ends_at: 9999-12-31T23:59:59+00:00 is not"),
    ("POST", "/silences", None, {"duration": "1h", "starts_at": "9999-12-31T23:30:00+00:00"}, "starts_at: 9999-"),
    ("POST", "/silences", None, {"duration": "1h", "starts_at": "2026-12-02T01:00:00"},
     "starts_at: 2026-12-02T01:00:00 has no time zone"),
    ("POST", "/silences", None, {"starts_at": "2027-01-02T00:00:00+00:00", "ends_at": "2027-01-01T00:00:00+00:00"},
     "ends_at: a silence must end after it starts (2027-01-02T00:00:00+00:00)"),
    ("POST", "/silences", None, {"ends_at": "2020-01-01T00:00:00+00:00"},  # before now (2026-12-01 12:00)
     "ends_at: a silence must end after it starts (2026-12-01T12:00:00+00:00 .. 2020-01-01T00:00:00+00:00)"),
])
def test_out_of_range_is_422_naming_the_field(served: str, store: Store, method: str, path: str,
                                              params: dict[str, str] | None, body: dict[str, Any] | None,
                                              detail: str) -> None:
    payload = None if body is None else {**WHY, "matcher": "switch:core01-*", **body}
    response = httpx.request(method, f"{served}{path}", params=params, json=payload, headers=AUTH, timeout=10)
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith(detail), response.json()
    assert store.silences() == []


@pytest.mark.usefixtures("token")
def test_the_last_instant_accepted_is_stored_and_read_back(served: str, store: Store) -> None:
    body = {**WHY, "matcher": "switch:core01-*", "ends_at": "2999-12-31T23:59:59+00:00"}
    response = httpx.post(f"{served}/silences", json=body, headers=AUTH, timeout=10)
    assert response.status_code == 201, response.text
    assert [s.ends_at.year for s in store.silences()] == [2999]
    listed = httpx.get(f"{served}/silences", params={"ended_since": "1970-01-01T00:00:00+00:00"}, timeout=10)
    assert [s["ends_at"] for s in listed.json()] == ["2999-12-31T23:59:59Z"]
