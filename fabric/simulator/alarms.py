"""Open alarms (``GET /app/alarms``): one per (event type, object), counting repeats.

Shape from the UFM REST guide's example: ``{"id","event_type","type","name","summary","reason","severity",
"timestamp","event_count","duration","counter","related_object_name","related_object_path"}``, where
``type`` is the policy's alarm type (55 for event 394) and ``duration`` its TTL (420 for 394).  An alarm
whose event has a TTL closes that many seconds after its last repeat; one without a TTL stays until the
simulator clears it (the fault ends).  How UFM closes alarms is UNCONFIRMED beyond that.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fabric.simulator.events import EventRecord, ms_timestamp


@dataclass(slots=True)
class Alarm:
    id: int
    record: EventRecord
    first: datetime
    last: datetime
    count: int = 1

    def to_rest(self) -> dict[str, Any]:
        spec, obj = self.record.spec, self.record.obj
        return {
            "id": self.id, "event_type": spec.id, "type": spec.alarm_type, "name": spec.name,
            "summary": self.record.description, "reason": spec.name, "severity": spec.severity,
            "timestamp": ms_timestamp(self.last), "event_count": self.count, "duration": spec.ttl,
            "counter": None, "related_object_name": obj.object_name, "related_object_path": obj.object_path,
        }


class AlarmTable:
    def __init__(self) -> None:
        self._open: dict[tuple[int, str], Alarm] = {}
        self._next_id = 1
        self._encoded: bytes | None = None

    def __len__(self) -> int:
        return len(self._open)

    def observe(self, record: EventRecord) -> bool:
        """Open or repeat the alarm of ``record`` if its event raises one; True when the table changed."""
        if not record.spec.raises_alarm:
            return False
        self._encoded = None
        key = (record.spec.id, record.obj.object_name)
        alarm = self._open.get(key)
        if alarm is None:
            self._open[key] = Alarm(self._next_id, record, record.when, record.when)
            self._next_id += 1
        else:
            alarm.record = record
            alarm.last = record.when
            alarm.count += 1
        return True

    def clear(self, event_ids: tuple[int, ...], object_name: str) -> bool:
        changed = False
        for event_id in event_ids:
            changed = self._open.pop((event_id, object_name), None) is not None or changed
        if changed:
            self._encoded = None
        return changed

    def expire(self, now: datetime) -> bool:
        gone = [key for key, alarm in self._open.items()
                if alarm.record.spec.ttl and now - alarm.last >= timedelta(seconds=alarm.record.spec.ttl)]
        for key in gone:
            del self._open[key]
        if gone:
            self._encoded = None
        return bool(gone)

    def reset(self) -> None:
        self._open.clear()
        self._next_id = 1
        self._encoded = None

    def get(self, alarm_id: int) -> Alarm | None:
        return next((a for a in self._open.values() if a.id == alarm_id), None)

    def to_rest(self) -> list[dict[str, Any]]:
        return [alarm.to_rest() for alarm in sorted(self._open.values(), key=lambda a: a.id)]

    def encoded(self) -> bytes:
        """The JSON list, re-encoded only after the table changed."""
        if self._encoded is None:
            self._encoded = json.dumps(self.to_rest(), separators=(",", ":")).encode()
        return self._encoded
