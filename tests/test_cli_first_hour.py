"""The operator's first hour: what the commands say is what happened, and nothing is done without saying so."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.store import Store

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
runner = CliRunner()


def test_simulate_offline_counts_the_events_not_the_last_id(tmp_path: Path) -> None:
    """After a UFM restart ids start again at 1: the last id said 4 for 6 events."""
    log = tmp_path / "event.log"
    result = runner.invoke(app, ["simulate", "--preset", "tiny", "--scenario", str(SCENARIOS / "ufm-restart.toml"),
                                 "--offline", "10m", "--event-log", str(log)])
    assert result.exit_code == 0, result.output
    lines = log.read_text().splitlines()
    assert f"simulated 600s: {len(lines)} events," in result.output and len(lines) > 2


def test_an_event_log_of_an_earlier_run_is_refused_unless_appended_to(tmp_path: Path) -> None:
    """It was appended to silently, and replay read both runs as one history."""
    log = tmp_path / "event.log"
    first = ["simulate", "--preset", "tiny", "--scenario", str(SCENARIOS / "link-down.toml"), "--offline", "15m",
             "--event-log", str(log)]
    assert runner.invoke(app, first).exit_code == 0
    earlier = log.read_text()
    again = runner.invoke(app, first)
    assert again.exit_code == 2 and log.read_text() == earlier
    # The message may be wrapped at the terminal's width (a long temporary path): compared word by word.
    said = f"--event-log {log}: holds {len(earlier.encode())} bytes of an earlier run"
    assert " ".join(said.split()) in " ".join(again.output.split())
    appended = runner.invoke(app, [*first, "--append"])
    # Each run starts at the wall clock's second: a run may be stamped a second after the first, else the same.
    assert appended.exit_code == 0 and log.read_text().startswith(earlier)
    assert _untimed(log.read_text()) == _untimed(earlier) * 2
    empty = tmp_path / "empty.log"
    empty.touch()  # an empty file holds no run: written to as a new one
    assert runner.invoke(app, [*first[:-1], str(empty)]).exit_code == 0
    assert _untimed(empty.read_text()) == _untimed(earlier)


def _untimed(log: str) -> list[str]:
    """An event.log's lines without their timestamps (``2026-12-06 02:12:08.000 ``)."""
    return [line[24:] for line in log.splitlines()]


def test_components_list_with_nothing_to_show_says_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    with Store.open(url, fabric="lab") as store:
        store.halt("a storm")
        store.resume("over")  # the fabric's daemon ran: it has a breaker, no component with a state
    listed = runner.invoke(app, ["components", "list", "--store", url, "--fabric", "lab"])
    assert listed.exit_code == 0
    assert listed.output == "no component has a recorded state: all are healthy as far as automation knows\n"
    assert runner.invoke(app, ["components", "list", "--store", url, "--fabric", "lab", "-f", "json"]).output == "[]\n"
