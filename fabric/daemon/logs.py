"""The daemon's logs: one JSON object per line (``--log-format json``, the default) or text for a terminal.

Every line logged while a cycle runs carries that cycle's id (``CYCLE_ID``, a context variable the runtime sets
around the cycle: the tasks the cycle starts inherit it); decision lines carry their component, rule and decision
as fields of their own (``extra=``), so a log pipeline can filter on them without parsing the message.

Messages carry what others wrote (a silence's matcher and reason, a node description from UFM, a ticket's summary):
both formats write them through ``topology.printable.visible``, so a newline in one cannot end the line and forge
the next (log injection), and no control or bidirectional character reaches a terminal or a log viewer. A text
line is one line; a traceback follows it on lines of its own, each indented, so none of them reads as a record.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from enum import StrEnum

from topology.printable import visible, visible_lines

CYCLE_ID: ContextVar[int | None] = ContextVar("fabric_cycle_id", default=None)

FIELDS = ("component", "rule", "decision", "dry_run")
"""``extra=`` keys copied to the JSON object when a line has them."""


class LogFormat(StrEnum):
    JSON = "json"
    TEXT = "text"


class _CycleFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.cycle = CYCLE_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": visible(record.getMessage()),
        }
        cycle = getattr(record, "cycle", None)
        if cycle is not None:
            line["cycle"] = cycle
        for key in FIELDS:
            if hasattr(record, key):
                value = getattr(record, key)
                line[key] = visible(value) if isinstance(value, str) else value
        if record.exc_info:
            line["exception"] = visible_lines(self.formatException(record.exc_info))
        return json.dumps(line, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        record.message = visible(record.getMessage())
        record.asctime = self.formatTime(record, self.datefmt)
        text = self.formatMessage(record)
        cycle = getattr(record, "cycle", None)
        if cycle is not None:
            text += f" [cycle {cycle}]"
        details = [self.formatException(record.exc_info)] if record.exc_info else []
        details += [self.formatStack(record.stack_info)] if record.stack_info else []
        for detail in details:
            text += "".join(f"\n    {visible(line)}" for line in detail.split("\n"))
        return text


def cycle_filter() -> logging.Filter:
    """Adds the running cycle's id (``None`` outside a cycle) to every record a handler emits."""
    return _CycleFilter()


def configure(log_format: LogFormat, level: int = logging.INFO) -> None:
    """Route every logger (the service's, uvicorn's, APScheduler's) to stderr in ``log_format``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format is LogFormat.JSON else TextFormatter())
    handler.addFilter(cycle_filter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # APScheduler logs every run at INFO ("Running job ...", "executed successfully"): twice a cycle of noise.
    logging.getLogger("apscheduler.executors").setLevel(logging.WARNING)
    # httpx logs every request at INFO: hundreds a cycle on a large fabric. Its failures reach us as UfmErrors.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # uvicorn's "Started server process" and "Shutting down" say less than the daemon's own lines, and would be
    # the first lines of a refusal to start that must be one line.
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
