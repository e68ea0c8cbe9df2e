"""examples/grafana: the dashboard is one Grafana document whose panels fit the grid and each read one fabric
(the one picked at the top) from the data source picked at the top."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DASHBOARD = Path(__file__).resolve().parents[2] / "examples" / "grafana" / "fabric-remediation.json"
GRID_WIDTH = 24


def panels() -> list[dict[str, Any]]:
    document = json.loads(DASHBOARD.read_text())
    assert isinstance(document["panels"], list)
    return document["panels"]


def test_panels_have_unique_ids_and_fit_the_grid_without_overlapping() -> None:
    every = panels()
    assert len({panel["id"] for panel in every}) == len(every)
    taken: set[tuple[int, int]] = set()
    for panel in every:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= GRID_WIDTH, panel["title"]
        cells = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                 for y in range(grid["y"], grid["y"] + grid["h"])}
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells


def test_every_query_reads_the_fabric_and_the_data_source_picked_at_the_top() -> None:
    variables = {variable["name"] for variable in json.loads(DASHBOARD.read_text())["templating"]["list"]}
    assert variables == {"datasource", "fabric"}
    for panel in panels():
        if panel["type"] == "row":
            continue
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
            assert 'fabric="$fabric"' in target["expr"], (panel["title"], target["expr"])
