"""``fabricctl verify --html FILE``: one self-contained file (no script, nothing fetched), every finding in its table
and on its picture, hostile names as text, and a path that cannot be written refused in one line before any work."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli.app import app
from topology.faults import FaultCounts, copy_fabric, plant
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree
from topology.model import Cable, End
from topology.ports import Kind

runner = CliRunner(env={"COLUMNS": "200"})
HOSTILE = "<img src=x onerror=alert(1)>"


class _Elements(HTMLParser):
    """Every start tag with its attributes, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _elements(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(text)
    return parser.tags


def test_the_report_is_one_file_with_every_finding_marked(tmp_path: Path, tiny_plan: Path) -> None:
    plan = fat_tree(PRESETS["tiny"])
    planted = plant(plan, FaultCounts(missing=1, swapped=1, degraded=1, unexpected=1), seed=5)
    write_ufm_snapshot(planted.fabric, tmp_path / "snap")
    html = tmp_path / "out" / "report.html"  # a directory made for it
    result = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "snap"), "--html", str(html)])
    assert result.exit_code == 1, result.output
    assert "DOES NOT MATCH" in result.output  # the table still goes to the terminal
    tags = _elements(html.read_text(encoding="utf-8"))
    names = {tag for tag, _ in tags}
    assert "script" not in names and "link" not in names and "img" not in names and "iframe" not in names
    assert not [attrs for _, attrs in tags if "src" in attrs]
    assert {attrs["href"] for tag, attrs in tags if tag == "a"} <= {f"#pod-{n}" for n in (1, 2)}
    lines, rows = ({(attrs["data-cable"], attrs["data-state"]) for tag, attrs in tags if tag == kind and
                    "data-state" in attrs} for kind in ("line", "tr"))
    expected = {(plan.describe_cable(planted.missing[0]), "missing"),
                *((plan.describe_cable(cable), "miswired") for cable in planted.swapped[0]),
                (plan.describe_cable(planted.degraded[0]), "degraded"),
                (planted.fabric.describe_cable(planted.unexpected[0]), "unexpected")}
    assert lines == rows == expected
    leaves = [attrs["data-leaf"] for tag, attrs in tags if tag == "tr" and "data-leaf" in attrs]
    assert sorted(leaves) == sorted(d.name for d in plan.switches() if "leaf" in d.name)


def test_a_hostile_switch_name_is_text_in_the_report(tmp_path: Path, tiny_plan: Path) -> None:
    plan = fat_tree(PRESETS["tiny"])
    stray = Cable(End("pod01-spine01", "15"), End(HOSTILE.casefold(), "1"))
    built = copy_fabric(plan, plan.cables, "as built")
    built.add_device(HOSTILE, Kind.SWITCH)
    built.add_cable(stray)
    write_ufm_snapshot(built, tmp_path / "snap")
    html = tmp_path / "report.html"
    result = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "snap"), "--html", str(html)])
    assert result.exit_code == 1, result.output
    text = html.read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert not [tag for tag, _ in _elements(text) if tag == "img"]
    assert not [attrs for _, attrs in _elements(text) if "onerror" in attrs]


@pytest.mark.parametrize("where", ["directory", "under a file", "-"])
def test_an_html_path_that_cannot_be_written_is_one_line_exit_2(tmp_path: Path, tiny_plan: Path,
                                                                 where: str) -> None:
    (tmp_path / "file").write_text("")
    target = {"directory": tmp_path, "under a file": tmp_path / "file" / "report.html", "-": Path("-")}[where]
    result = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tiny_plan), "--html", str(target)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert ("needs a file name" if where == "-" else f"cannot write {target}") in result.output
