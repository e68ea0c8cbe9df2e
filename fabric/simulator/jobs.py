"""UFM jobs (``GET /jobs/<id>``) created by ``POST /actions``.

Shape from the UFM REST guide: ``{"ID","Status","Progress","Description","RelatedObjects","Created",
"LastUpdated","Summary","CreatedBy","Operation","Foreground"}``; statuses "Running", "Completed",
"Completed With Errors".  The ``Operation`` and ``Description`` wording is UNCONFIRMED.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fabric.simulator.events import ms_timestamp

RUNNING = "Running"
COMPLETED = "Completed"
FAILED = "Completed With Errors"


@dataclass(slots=True)
class Job:
    id: int
    action: str
    system_guid: str
    port: str | None
    created: datetime
    user: str
    status: str = RUNNING
    summary: str = ""
    updated: datetime | None = None
    related: list[str] = field(default_factory=list)

    def finish(self, when: datetime, error: str | None) -> None:
        self.status = FAILED if error else COMPLETED
        self.summary = error or ""
        self.updated = when

    def to_rest(self) -> dict[str, Any]:
        target = self.port or self.system_guid
        return {
            "ID": str(self.id), "Status": self.status, "Progress": 0 if self.status == RUNNING else 100,
            "Description": f"{self.action.capitalize()} port {target}", "RelatedObjects": list(self.related),
            "Created": ms_timestamp(self.created), "LastUpdated": ms_timestamp(self.updated or self.created),
            "Summary": self.summary, "CreatedBy": self.user, "Operation": f"Port {self.action.capitalize()}",
            "Foreground": True,
        }


    def child_rest(self) -> dict[str, Any]:
        """The sub-job of the one device the action ran on (``GET /jobs?parent_id=``): where NVIDIA's scripts read
        per-device errors. UFM's ids for sub-jobs are not documented; ``<parent>.1`` is the simulator's."""
        return {
            "ID": f"{self.id}.1", "ParentID": str(self.id), "Status": self.status,
            "Progress": 0 if self.status == RUNNING else 100, "Summary": self.summary,
            "RelatedObjects": [self.system_guid], "Created": ms_timestamp(self.created),
            "LastUpdated": ms_timestamp(self.updated or self.created),
            "Operation": f"Port {self.action.capitalize()}", "CreatedBy": self.user,
        }


class JobTable:
    def __init__(self) -> None:
        self._jobs: dict[int, Job] = {}
        self._next_id = 1

    def __len__(self) -> int:
        return len(self._jobs)

    def create(self, action: str, system_guid: str, port: str | None, when: datetime, user: str) -> Job:
        job = Job(self._next_id, action, system_guid, port, when, user, related=[system_guid])
        self._jobs[job.id] = job
        self._next_id += 1
        return job

    def get(self, job_id: int) -> Job | None:
        return self._jobs.get(job_id)

    def all(self) -> list[Job]:
        return list(self._jobs.values())

    def reset(self) -> None:
        self._jobs.clear()
