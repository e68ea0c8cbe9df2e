"""The daemon's log lines: JSON objects (or text) carrying the cycle id and a decision's fields."""

from __future__ import annotations

import io
import json
import logging
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

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


any_text = st.text(st.characters(codec="utf-8"), max_size=200)
HIDDEN = ["\n", "\r\n", "\x00", "\x1b[31m", "\u202e", "\u2066", "\u200b", "\u2028", "\x85", "\ufeff"]


@settings(max_examples=150, deadline=1000)
@given(message=any_text, argument=any_text, component=any_text,
       formatter=st.sampled_from([JsonFormatter, TextFormatter]))
@example(message="silence on", argument="switch:a\n2026-01-01 00:00:00,000 WARNING forged", component="x\u202ey",
         formatter=TextFormatter)
def test_a_log_record_is_one_line_with_nothing_hidden(message: str, argument: str, component: str,
                                                      formatter: type[logging.Formatter]) -> None:
    """Whatever text a record carries (a silence's matcher, a reason, a node description), it is one line, and no
    control, bidirectional or other invisible character is in it (nor in the JSON's decoded fields)."""
    record = logging.LogRecord("fabric.test", logging.WARNING, __file__, 1, message.replace("%", "%%") + " %s",
                               (argument,), None)
    record.component = component
    line = formatter().format(record)
    assert len(line.splitlines()) == 1 and line.isprintable(), line
    if formatter is JsonFormatter:
        fields = json.loads(line)
        assert fields["message"].isprintable() and fields["component"].isprintable()


@pytest.mark.parametrize("hidden", HIDDEN)
def test_each_hidden_character_is_shown_as_its_escape(hidden: str) -> None:
    record = logging.LogRecord("fabric.test", logging.WARNING, __file__, 1, "silence %s: %s",
                               (f"switch:a{hidden}b", "CHG-1"), None)
    line = TextFormatter().format(record)
    assert line.endswith(f"silence switch:a{hidden.encode('unicode_escape').decode()}b: CHG-1"), line


def test_a_traceback_follows_on_indented_lines_none_of_them_a_record() -> None:
    try:
        raise ValueError("bad\n2026-01-01 00:00:00,000 ERROR forged\x1b[2J")
    except ValueError:
        record = logging.LogRecord("fabric.test", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    first, *rest = TextFormatter().format(record).split("\n")
    assert first.endswith("failed") and rest
    assert all(line.startswith("    ") and line.isprintable() for line in rest), rest
