"""Every path ``fabricctl`` reads, pointed at ``/dev/zero``: one line naming it, exit 2, at once.

Read whole, ``/dev/zero`` grows a process until the kernel kills it (the issue saw 21 GB). The commands run in one
subprocess with its address space capped and a time bound, so a reader that went back to reading whatever it is
given fails this test with a ``MemoryError`` or a timeout instead of taking the machine down."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from fabric.store import Store
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree

ZERO = "/dev/zero"
MEMORY_CAP = 3 << 30
"""Bytes of address space the commands may map: plenty for fabricctl, far less than reading /dev/zero takes."""
BOUND = 120.0

# One CliRunner per case, inside the capped subprocess; one JSON line per case on stdout.
_DRIVER = """
import json, os, sys
from typer.testing import CliRunner
from fabric.cli.app import app
for name, argv, env in json.loads(sys.argv[1]):
    result = CliRunner().invoke(app, argv, env=env)
    print(json.dumps({"case": name, "code": result.exit_code, "output": result.output}), flush=True)
"""


def _config(path: Path, body: str) -> str:
    path.write_text(body)
    return str(path)


def _cases(tmp_path: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    plan = tmp_path / "plan.csv"
    with plan.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    snapshot = tmp_path / "snapshot"
    write_ufm_snapshot(fat_tree(PRESETS["tiny"]), snapshot)
    zero_snapshot = tmp_path / "zero-snapshot"
    zero_snapshot.mkdir()
    (zero_snapshot / "systems.json").symlink_to(ZERO)
    (zero_snapshot / "links.json").write_text("[]")
    events = tmp_path / "event.log"
    events.write_text("2026-06-01 08:00:00.000 [1] [64] Info [Fabric] Switch [default / Switch: s1]: up\n")
    runs = tmp_path / "runs.txt"
    runs.write_text("fail pod01-node01 pod01-node02\n")
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "FABRIC_UFM__PASSWORD").symlink_to(ZERO)
    store = f"sqlite:///{tmp_path}/fabric.db"
    Store.open(store, fabric="default").close()
    base = f'[fabric]\nplan = "{plan}"\n[store]\nurl = "{store}"\n[api]\nport = 0\n[ufm]\nurl = "https://127.0.0.1:9"\n'
    secret_zero = _config(tmp_path / "secret-zero.toml", base + f'secret_file = "{ZERO}"\n')
    jira_zero = _config(tmp_path / "jira-zero.toml", base + '[tickets]\nbackend = "jira"\n[tickets.jira]\n'
                        f'url = "https://jira.example"\nproject = "NET"\nca_bundle = "{ZERO}"\n')
    ufm = ["--plan", str(plan), "--ufm", "https://127.0.0.1:9"]
    password = {"FABRIC_UFM__PASSWORD": "x"}
    return [
        ("verify --plan", ["verify", "--plan", ZERO, "--as-built", str(plan)], {}),
        ("verify --as-built", ["verify", "--plan", str(plan), "--as-built", ZERO], {}),
        ("a snapshot file", ["verify", "--plan", str(plan), "--as-built", str(zero_snapshot)], {}),
        ("plan export --plan", ["plan", "export", "--plan", ZERO, "--format", "json", "-o", str(tmp_path / "g")], {}),
        ("config check", ["config", "check", ZERO], {}),
        ("config show", ["config", "show", ZERO], {}),
        ("replay --events", ["replay", "-a", str(snapshot), "-e", ZERO], {}),
        ("replay --config", ["replay", "-a", str(snapshot), "-e", str(events), "--config", ZERO], {}),
        ("replay --plan", ["replay", "-a", str(snapshot), "-e", str(events), "--plan", ZERO], {}),
        ("simulate --plan", ["simulate", "--plan", ZERO, "--offline", "1m"], {}),
        ("simulate --scenario", ["simulate", "--preset", "tiny", "--scenario", ZERO, "--offline", "1m"], {}),
        ("run --config", ["run", "--config", ZERO], password),
        ("run: [ufm] secret_file", ["run", "--config", secret_zero], {}),
        ("run: [tickets.jira] ca_bundle", ["run", "--config", jira_zero],
         {**password, "FABRIC_TICKETS__JIRA__TOKEN": "t"}),
        ("webhook --config", ["webhook", "--config", ZERO], {}),
        ("--ufm-secret-file", ["verify", *ufm, "--ufm-secret-file", ZERO], {}),
        ("--ufm-ca-bundle", ["verify", *ufm, "--ufm-ca-bundle", ZERO], password),
        ("a systemd credential", ["verify", *ufm], {"CREDENTIALS_DIRECTORY": str(credentials)}),
        ("bisect RUNS", ["bisect", ZERO], {}),
        ("bisect --plan", ["bisect", str(runs), "--plan", ZERO], {}),
        ("hosts golden --plan", ["hosts", "golden", "--plan", ZERO, "--store", store], {}),
    ]


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


@pytest.mark.skipif(not Path(ZERO).exists(), reason="no /dev/zero here")
def test_dev_zero_anywhere_is_one_line_and_exit_2(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FABRIC_", "CREDENTIALS_"))}
    done = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(cases)], capture_output=True, text=True,
                          timeout=BOUND, env=env, preexec_fn=_capped, check=False)
    answers = {answer["case"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert list(answers) == [name for name, _, _ in cases], done.stderr[-2000:]
    wrong = {name: answer for name, answer in answers.items()
             if answer["code"] != 2 or len(answer["output"].strip().splitlines()) != 1
             or ": is a character device (like /dev/zero or a terminal), not a file" not in answer["output"]}
    assert not wrong, json.dumps(wrong, indent=1)


@pytest.mark.skipif(not Path(ZERO).exists(), reason="no /dev/zero here")
def test_a_plan_at_dev_zero_stops_the_daemon_with_the_engine_s_one_line(tmp_path: Path) -> None:
    """The daemon's plan is read by its engine process alone (the API process takes the index it hands over), so
    the refusal is the engine's line on the daemon's stderr, and the daemon's exit 2: run as the real command."""
    store = f"sqlite:///{tmp_path}/fabric.db"
    Store.open(store, fabric="default").close()
    config = _config(tmp_path / "plan-zero.toml", f'[fabric]\nplan = "{ZERO}"\n[store]\nurl = "{store}"\n'
                     '[api]\nport = 0\n[ufm]\nurl = "https://127.0.0.1:9"\n')
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FABRIC_", "CREDENTIALS_"))}
    done = subprocess.run([sys.executable, "-m", "fabric.cli", "run", "--config", config], capture_output=True,
                          text=True, timeout=BOUND, env={**env, "FABRIC_UFM__PASSWORD": "x"}, preexec_fn=_capped,
                          check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        f"fabricctl: error: {ZERO}: is a character device (like /dev/zero or a terminal), not a file"]
