"""`fabricctl verify --ufm URL` against the UFM simulator over real loopback HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.simulator import SimState, serve
from topology.faults import FaultCounts, plant
from topology.generate import PRESETS, fat_tree

PLAN = fat_tree(PRESETS["tiny"])


def verify(tiny_plan: Path, url: str, *extra: str, password: str = "123456") -> tuple[int, str]:
    runner = CliRunner(env={"FABRIC_UFM_PASSWORD": password, "COLUMNS": "200"})
    result = runner.invoke(app, ["verify", "--plan", str(tiny_plan), "--ufm", url, "--format", "json", *extra])
    return result.exit_code, result.output


def test_matching_fabric_exits_0(tiny_plan: Path) -> None:
    with serve(SimState.from_plan(PLAN)) as server:
        code, output = verify(tiny_plan, server.url)
    assert code == 0, output
    assert json.loads(output)["summary"]["ok"] == len(PLAN.cables)


def test_planted_miswire_is_found_through_ufm(tiny_plan: Path) -> None:
    as_built = plant(PLAN, FaultCounts(swapped=1, missing=1), seed=4)
    with serve(SimState.from_plan(PLAN, as_built=as_built.fabric)) as server:
        code, output = verify(tiny_plan, server.url)
    assert code == 1, output
    report = json.loads(output)
    assert (report["summary"]["miswired"], report["summary"]["missing"]) == (2, 1)
    assert {m["kind"] for m in report["miswired"]} == {"swapped"}
    (first, second) = as_built.swapped[0]
    assert {m["expected"] for m in report["miswired"]} == {PLAN.describe_cable(first), PLAN.describe_cable(second)}


def test_token_and_session_auth(tiny_plan: Path) -> None:
    with serve(SimState.from_plan(PLAN)) as server:
        code, output = verify(tiny_plan, server.url, "--ufm-auth", "session")
        assert code == 0, output
        bad, message = verify(tiny_plan, server.url, password="wrong")
    assert bad == 2 and "401" in message


def test_unreachable_ufm_exits_2(tiny_plan: Path) -> None:
    code, output = verify(tiny_plan, "http://127.0.0.1:9", "--ufm-auth", "basic")
    assert code == 2 and "127.0.0.1:9" in output


def test_exactly_one_source(tiny_plan: Path) -> None:
    code, output = verify(tiny_plan, "http://127.0.0.1:9", "--as-built", str(tiny_plan))
    assert code == 2 and "exactly one as-built source" in output


@pytest.mark.parametrize(("url", "message"), [
    ("htp:/x", "--ufm 'htp:/x': the URL must start with http:// or https://"),
    ("http://", "--ufm 'http://': the URL names no host"),
    ("127.0.0.1:8000", "--ufm '127.0.0.1:8000': the URL must start with http:// or https:// "
                       "(e.g. https://127.0.0.1:8000)"),
    ("http://ufm example/", "--ufm 'http://ufm example/': a URL cannot contain spaces"),
    ("http://[::1", "--ufm 'http://[::1': not a valid URL"),
    ("http://127.0.0.1:99999", "--ufm 'http://127.0.0.1:99999': not a valid URL"),
])
def test_a_malformed_ufm_url_is_one_line_naming_the_option(tiny_plan: Path, url: str, message: str) -> None:
    code, output = verify(tiny_plan, url)
    lines = output.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"fabricctl: error: {message}"), output


def test_a_missing_ca_bundle_is_one_line(tiny_plan: Path, tmp_path: Path) -> None:
    code, output = verify(tiny_plan, "https://127.0.0.1:9", "--ufm-ca-bundle", str(tmp_path / "ca.pem"))
    assert code == 2 and output.strip().splitlines() == [
        f"fabricctl: error: https://127.0.0.1:9: cannot use the CA bundle {tmp_path / 'ca.pem'}: "
        "no such file"], output


def test_a_password_in_the_url_is_not_in_the_report(tiny_plan: Path) -> None:
    with serve(SimState.from_plan(PLAN)) as server:
        code, output = verify(tiny_plan, server.url.replace("http://", "http://admin:s3cret@"))
    assert code == 0, output
    assert "s3cret" not in output and json.loads(output)["as_built"].startswith("http://admin:***@127.0.0.1:")
