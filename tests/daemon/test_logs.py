"""The daemon's log lines: JSON objects (or text) carrying the cycle id and a decision's fields."""

from __future__ import annotations

import io
import json
import logging

from fabric.daemon.logs import CYCLE_ID, JsonFormatter, TextFormatter, cycle_filter


def _logged(formatter: logging.Formatter, cycle: int | None, **extra: object) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    handler.addFilter(cycle_filter())
    logger = logging.getLogger(f"test.daemon.logs.{id(stream)}")
    logger.propagate = False
    logger.addHandler(handler)
    token = CYCLE_ID.set(cycle)
    try:
        logger.warning("disable %s: %s", "link:a/1|b/2", "flapping", extra=extra)
    finally:
        CYCLE_ID.reset(token)
        logger.removeHandler(handler)
    return stream.getvalue()


def test_a_json_line_has_the_cycle_and_the_decision_fields() -> None:
    line = json.loads(_logged(JsonFormatter(), 7, component="link:a/1|b/2", rule="flap", decision="disable"))
    assert line["message"] == "disable link:a/1|b/2: flapping" and line["level"] == "warning"
    assert (line["cycle"], line["component"], line["rule"], line["decision"]) == (7, "link:a/1|b/2", "flap",
                                                                                "disable")


def test_outside_a_cycle_there_is_no_cycle_id() -> None:
    assert "cycle" not in json.loads(_logged(JsonFormatter(), None))
    assert _logged(TextFormatter(), 3).rstrip().endswith("disable link:a/1|b/2: flapping [cycle 3]")
