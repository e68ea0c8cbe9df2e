"""The command line as an operator runs it: real files, real exit codes."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli.app import _PARTS, app, assembled
from topology.faults import FaultCounts, plant
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree

runner = CliRunner(env={"COLUMNS": "200"})


def test_plan_generate_h100_4k(tmp_path: Path) -> None:
    path = tmp_path / "plan.csv"
    result = runner.invoke(app, ["plan", "generate", "--preset", "h100-4k", "--output", str(path)])
    assert result.exit_code == 0
    assert "320 switches, 12288 cables" in result.output
    lines = path.read_text().splitlines()
    assert lines[0].startswith("#StartDevice,StartPort,EndDevice,EndPort")
    assert len(lines) == 1 + 12288


def test_plan_generate_overrides_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    ok = runner.invoke(app, ["plan", "generate", "--preset", "tiny", "--pods", "3", "--speed", "hdr", "-o", str(path)])
    assert ok.exit_code == 0 and "16 switches, 72 cables" in ok.output
    assert ",200000,4x" in path.read_text()
    bad = runner.invoke(app, ["plan", "generate", "--preset", "tiny", "--hosts-per-pod", "40", "-o", str(path)])
    assert bad.exit_code == 2 and "radix is 16" in bad.output
    unknown = runner.invoke(app, ["plan", "generate", "--preset", "nope", "-o", str(path)])
    assert unknown.exit_code == 2 and "unknown preset 'nope'" in unknown.output


NAMES = [name for names, _ in _PARTS for name in names]


GROUPS = ["plan", "burnin", "tickets", "ufm", "config", "silence", "components", "store"]


@pytest.mark.parametrize("argv", [[name, "--help"] for name in NAMES] + [[group] for group in GROUPS] + [
    ["verify"], ["verify", "--no-such-option"], ["verify", "--plan"], ["plan", "generate", "--help"],
    ["plan", "nonsense"], ["components", "list", "--help"]], ids=" ".join)
def test_the_app_main_assembles_for_a_command_answers_as_the_whole_one(argv: list[str]) -> None:
    """`fabricctl verify` hands click verify alone to build: its help, usage errors and exit codes are the whole
    app's."""
    whole, alone = runner.invoke(app, argv), runner.invoke(assembled(argv[0]), argv)
    assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)
    assert len(assembled(argv[0]).registered_commands) + len(assembled(argv[0]).registered_groups) < len(NAMES)


def test_a_name_of_no_command_gets_the_whole_app() -> None:
    for argv in (["verfy"], ["--help"], []):
        whole, unknown = runner.invoke(app, argv), runner.invoke(assembled(argv[0] if argv else None), argv)
        assert (unknown.exit_code, unknown.output) == (whole.exit_code, whole.output)
    assert "verify" in runner.invoke(assembled("verfy"), ["verfy"]).output  # click's "did you mean"


def test_verify_plan_against_itself_exits_0(tiny_plan: Path) -> None:
    result = runner.invoke(app, ["verify", "--plan", str(tiny_plan), "--as-built", str(tiny_plan), "-f", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert next(iter(report)) == "summary"
    assert report["summary"]["ok"] == report["summary"]["planned"] == 48
    assert report["matches"] is True


def test_verify_snapshot_with_faults_exits_1_and_reports(tmp_path: Path, tiny_plan: Path) -> None:
    plan = fat_tree(PRESETS["tiny"])
    planted = plant(plan, FaultCounts(missing=1, swapped=1, degraded=1), seed=5)
    write_ufm_snapshot(planted.fabric, tmp_path / "snap")
    result = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "snap"), "--format", "json"])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.output)["summary"]
    assert (summary["missing"], summary["miswired"], summary["degraded"]) == (1, 2, 1)
    table = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "snap")])
    assert table.exit_code == 1
    for heading in ("DOES NOT MATCH", "Missing cables", "Miswired cables", "Degraded cables", "swapped"):
        assert heading in table.output


def test_verify_answers_alike_from_a_kept_plan_and_keeps_none_when_told_not_to(
        tmp_path: Path, tiny_plan: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    kept = tmp_path / "xdg" / "fabric-remediation"
    write_ufm_snapshot(plant(fat_tree(PRESETS["tiny"]), FaultCounts(missing=1, swapped=1), seed=3).fabric,
                       tmp_path / "snap")
    outputs = []
    for format in ("json", "table"):
        shutil.rmtree(kept, ignore_errors=True)
        argv = ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "snap"), "-f", format]
        runs = [runner.invoke(app, [*argv, "--no-plan-cache"])]
        monkeypatch.setenv("FABRIC_PLAN_CACHE", "0")
        runs.append(runner.invoke(app, argv))
        monkeypatch.delenv("FABRIC_PLAN_CACHE")
        assert not kept.exists()
        runs += [runner.invoke(app, argv), runner.invoke(app, argv)]  # the model kept, then read from there
        assert len(list(kept.glob("*.plan-model"))) == 1
        assert [run.exit_code for run in runs] == [1, 1, 1, 1]
        assert len({run.output for run in runs}) == 1
        outputs.append(runs[0].output)
    assert "DOES NOT MATCH" in outputs[1]


def test_verify_bad_input_exits_2_naming_the_place(tmp_path: Path, tiny_plan: Path) -> None:
    broken = tmp_path / "broken.csv"
    broken.write_text("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\nsw1,abra,sw2,Port 2\n")
    result = runner.invoke(app, ["verify", "-p", str(broken), "-a", str(tiny_plan)])
    assert result.exit_code == 2
    assert f"{broken}:3: column 'StartPort'" in result.output
    missing = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "nowhere" in missing.output


def test_verify_lenient_plan_reports_conflicts(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\nsw1,Port 1,sw3,Port 1\n")
    strict = runner.invoke(app, ["verify", "-p", str(plan), "-a", str(plan)])
    assert strict.exit_code == 2 and "cabled twice" in strict.output
    built = tmp_path / "built.csv"
    built.write_text("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\n")
    lenient = runner.invoke(app, ["verify", "-p", str(plan), "-a", str(built), "--lenient-plan", "-f", "json"])
    assert lenient.exit_code == 1
    report = json.loads(lenient.output)
    assert report["summary"]["plan_conflicts"] == 1
    assert report["plan_conflicts"] == [f"{plan}:3: port sw1/Port 1 is cabled twice (first at {plan}:2)"]


def test_usage_error_exits_2(tiny_plan: Path) -> None:
    assert runner.invoke(app, ["verify", "--plan", str(tiny_plan)]).exit_code == 2
    assert runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tiny_plan), "-f", "xml"]).exit_code == 2


def test_installed_console_script_runs(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    with plan.open("w") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    fabricctl = Path(sys.executable).with_name("fabricctl")
    done = subprocess.run([str(fabricctl), "verify", "-p", str(plan), "-a", str(plan)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "MATCHES the plan" in done.stdout


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-0.5", "1.5"])
def test_verify_refuses_a_guard_outside_0_to_1_in_one_line(tiny_plan: Path, value: str) -> None:
    result = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tiny_plan), f"--guard={value}"])
    assert result.exit_code == 2
    assert result.output.startswith("fabricctl: error: --guard must be") and result.output.count("\n") == 1
    assert value.lstrip("-") in result.output


def test_verify_bandwidth_sees_a_1x_uplink_and_fits_80_columns(tmp_path: Path, tiny_plan: Path) -> None:
    plan = fat_tree(PRESETS["tiny"])
    planted = plant(plan, FaultCounts(degraded=1), seed=1)
    assert [(c.a.device, c.b.device) for c in planted.degraded] == [("pod02-leaf01", "pod02-spine01")]
    write_ufm_snapshot(planted.fabric, tmp_path / "snap")
    argv = ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "snap"), "--bandwidth"]
    section = json.loads(runner.invoke(app, [*argv, "-f", "json"]).output)["bandwidth"]
    assert isinstance(section["seconds"], float) and section["below_plan"] == 1
    assert section["worst"][0] == {"leaf": "pod02-leaf01", "planned_gbps": 1600.0, "gbps": 1300.0,
                                   "ratio": 0.8125, "planned_paths": 16, "paths": 16}
    table = CliRunner(env={"COLUMNS": "80"}).invoke(app, argv)
    assert table.exit_code == 1
    lines = table.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    # The path count misses the slow cable (no paths table); the bandwidth table has its leaf, whole.
    assert "Paths to core: 0 of 4 leaves below the guard" in table.output
    assert "fewest paths" not in table.output
    assert "Leaves with the least bandwidth to core" in table.output
    assert any(line.split("│")[1:4] == [" pod02-leaf01 ", " 1300 ", " 1600         "] for line in lines)
    assert any(line.startswith("bandwidth: computed in ") and line.endswith(" s") for line in lines)
    without = runner.invoke(app, argv[:-1]).output
    assert "Bandwidth to core" not in without and "computed in" not in without


def one_error_line(output: str) -> str:
    assert output.startswith("fabricctl: error: ") and output.count("\n") == 1, output
    return output


@pytest.mark.parametrize("command", [["plan", "generate", "--preset", "tiny"], ["plan", "export", "-p", "PLAN"]])
def test_plan_commands_refuse_an_output_they_cannot_write(tmp_path: Path, tiny_plan: Path, command: list[str]) -> None:
    argv = [str(tiny_plan) if arg == "PLAN" else arg for arg in command]
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me\n")
    for output, reason in ((tmp_path, "it is a directory"), (a_file / "x.out", f"{a_file} is not a directory"),
                           (Path("/proc/fabricctl-test.out"), "No such file or directory")):
        result = runner.invoke(app, [*argv, "-o", str(output)])
        assert result.exit_code == 2, result.output
        assert reason in one_error_line(result.output) and str(output) in result.output
    assert a_file.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a-file", "plan.csv"])  # no partial file left


def test_plan_export_reads_back_in_every_format(tmp_path: Path, tiny_plan: Path) -> None:
    import networkx as nx

    readers = {"graphml": nx.read_graphml, "gexf": nx.read_gexf,
               "json": lambda path: nx.node_link_graph(json.loads(Path(path).read_text()), edges="edges")}
    for graph_format, read in readers.items():
        output = tmp_path / f"tiny.{graph_format}"
        result = runner.invoke(app, ["plan", "export", "-p", str(tiny_plan), "-f", graph_format, "-o", str(output)])
        assert result.exit_code == 0 and "28 devices, 48 cables" in result.output, result.output
        graph = read(str(output))
        assert graph.is_multigraph() and (graph.number_of_nodes(), graph.number_of_edges()) == (28, 48)
        node = graph.nodes["pod01-leaf01"]
        assert (node["name"], node["kind"], node["tier"]) == ("pod01-leaf01", "switch", "leaf")
        assert graph.nodes["pod01-node01 mlx5_0"]["host"] == "pod01-node01"
        edge = graph.edges["pod01-leaf01", "pod01-spine01", "pod01-leaf01/Port 5 - pod01-spine01/Port 1"]
        assert (edge["width"], edge["speed_gbps"], edge["origin"]) == (4, 400.0, f"{tiny_plan}:10")
    piped = runner.invoke(app, ["plan", "export", "-p", str(tiny_plan), "-f", "json", "-o", "-"])
    assert piped.exit_code == 0 and len(json.loads(piped.output)["edges"]) == 48


def test_plan_export_of_an_as_built_snapshot(tmp_path: Path) -> None:
    import networkx as nx

    planted = plant(fat_tree(PRESETS["tiny"]), FaultCounts(missing=2), seed=1)
    view = write_ufm_snapshot(planted.fabric, tmp_path / "snap")
    output = tmp_path / "as-built.graphml"
    result = runner.invoke(app, ["plan", "export", "--as-built", str(tmp_path / "snap"), "-o", str(output)])
    assert result.exit_code == 0, result.output
    graph = nx.read_graphml(output)
    assert graph.number_of_edges() == 46
    # UFM names tiers nowhere: they are ranked from the hosts; GUIDs come from the snapshot.
    assert graph.nodes["core01-01"]["tier"] == "core"
    assert graph.nodes["core01-01"]["guid"] == view.guids["core01-01"]
    assert one_error_line(runner.invoke(app, ["plan", "export", "-o", str(output)]).output)
    missing = runner.invoke(app, ["plan", "export", "-a", str(tmp_path / "nowhere"), "-o", str(output)])
    assert missing.exit_code == 2 and "nowhere" in one_error_line(missing.output)


NETWORKX_STAYS_OUT = """
import sys
import fabric.controller.engine
from fabric.cli.app import _PARTS, app, assembled
try:
    app(["verify", "--plan", sys.argv[1], "--as-built", sys.argv[1]] + sys.argv[2:])
except SystemExit as exit:
    print("exit", exit.code)
print("networkx" in sys.modules)
"""


@pytest.mark.parametrize(("extra", "loaded"), [([], False), (["--bandwidth"], True)])
def test_networkx_is_imported_only_when_bandwidth_is_asked_for(tiny_plan: Path, extra: list[str], loaded: bool) -> None:
    done = subprocess.run([sys.executable, "-c", NETWORKX_STAYS_OUT, str(tiny_plan), "-f", "json", *extra],
                          capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-2:] == ["exit 0", str(loaded)], done.stdout + done.stderr


SERVERS_STAY_OUT = """
import sys
from fabric.cli.app import _PARTS, app, assembled
try:
    app(sys.argv[1:])
except SystemExit as exit:
    print("exit", exit.code)
print(sorted(name for name in ("fastapi", "starlette", "uvicorn", "sqlalchemy", "httpx") if name in sys.modules))
"""


@pytest.mark.parametrize("command", ["verify", "replay", "replay --help"])
def test_one_shot_commands_import_no_server_database_or_http_library(tmp_path: Path, tiny_plan: Path,
                                                                      command: str) -> None:
    """`verify` and `replay` start up with what they use: FastAPI alone took 0.18 s of verify's 0.6 s on h100-4k,
    imported because `fabricctl webhook`'s module was, and uvicorn came with reading a configuration."""
    snapshot = tmp_path / "as-built"
    write_ufm_snapshot(fat_tree(PRESETS["tiny"]), snapshot)
    log = tmp_path / "event.log"
    log.write_text("2026-06-01 08:01:30.000 [1] [329] WARNING [Fabric_Topology] Link [Source b8599f2fa720bd7e_5  TO "
                   "Dest: b8599fc1bdf97c69_1]: Link went down: (Switch:a:5)b8599f2fa720bd7e:5 - "
                   "(Switch:b:1)b8599fc1bdf97c69:1\n")
    argv = {"verify": ["verify", "--plan", str(tiny_plan), "--as-built", str(snapshot), "-f", "json"],
            "replay": ["replay", "--as-built", str(snapshot), "--events", str(log), "-f", "json"],
            "replay --help": ["replay", "--help"]}[command]
    done = subprocess.run([sys.executable, "-c", SERVERS_STAY_OUT, *argv], capture_output=True, text=True, check=True)
    exit_line, loaded = done.stdout.splitlines()[-2:]
    assert exit_line in ("exit 0", "exit 1") and loaded == "[]", done.stdout + done.stderr  # 1: the replay's findings


def test_a_reader_that_stops_early_ends_verify_quietly(tmp_path: Path, tiny_plan: Path) -> None:
    """`fabricctl verify | head -1`: the command dies of SIGPIPE like any Unix tool, with no traceback and no
    exit code that would read "the fabric does not match"."""
    big = tmp_path / "big.csv"  # a large plan against the tiny fabric: megabytes of missing cables, past any pipe
    with big.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["h100-4k"]), handle)
    command = [sys.executable, "-m", "fabric.cli", "verify", "--plan", str(big), "--as-built", str(tiny_plan),
               "--format", "json", "--worst", "100000"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # the reader goes away before the report is written out
        errors = process.stderr.read().decode()
        code = process.wait(timeout=60)
    assert "Traceback" not in errors and "BrokenPipe" not in errors, errors
    assert code == -signal.SIGPIPE, code
