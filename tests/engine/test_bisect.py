"""``fabricctl bisect``: the true culprits are always among the suspects, with and without noise within its bound;
the proposed split leaves fewer suspects expected while the runs leave a doubt; and the published 48-host story."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.remediation.bisect import Run, Verdict, _Classes, expected_suspects, explain, propose
from fabric.remediation.runs import parse_runs
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree

runner = CliRunner(env={"COLUMNS": "80"})
HOSTS = [f"node{i:02d}" for i in range(48)]


@st.composite
def instances(draw: st.DrawFn) -> tuple[list[Run], frozenset[str], int, int]:
    """Random runs over up to 12 hosts with up to 2 culprits, up to ``noise`` outcomes flipped."""
    hosts = [f"h{i}" for i in range(draw(st.integers(2, 12)))]
    culprits = draw(st.integers(1, 2))
    bad = frozenset(draw(st.lists(st.sampled_from(hosts), min_size=1, max_size=culprits, unique=True)))
    members = st.lists(st.sampled_from(hosts), min_size=1, unique=True).map(frozenset)
    runs = [Run(group, not bad.isdisjoint(group)) for group in draw(st.lists(members, min_size=1, max_size=8))]
    noise = draw(st.integers(0, 2))
    flips = draw(st.lists(st.integers(0, len(runs) - 1), max_size=noise, unique=True))
    runs = [Run(run.hosts, not run.failed) if at in flips else run for at, run in enumerate(runs)]
    return runs, bad, culprits, noise


@settings(max_examples=150, deadline=None)
@given(instances())
def test_the_true_culprits_are_always_suspects(instance: tuple[list[Run], frozenset[str], int, int]) -> None:
    runs, bad, culprits, noise = instance
    verdict = explain(runs, culprits, noise)
    seen = bad & set().union(*(run.hosts for run in runs))  # a culprit no run held cannot be suspected
    if seen:
        assert seen in verdict.explanations
    assert seen <= set(verdict.suspects)
    assert seen.isdisjoint(verdict.cleared)


@settings(max_examples=100, deadline=None)
@given(instances(), st.integers(1, 6))
def test_the_split_strictly_reduces_the_expected_suspects(instance: tuple[list[Run], frozenset[str], int, int],
                                                          groups: int) -> None:
    runs, _, culprits, noise = instance
    verdict = explain(runs, culprits, noise)
    split = propose(verdict, groups)  # one group asked for: two proposed while a doubt is left
    assert sorted(host for group in split for host in group) == sorted(verdict.suspects)  # each suspect once
    if len(verdict.explanations) > 1:
        assert expected_suspects(verdict.explanations, split) < len(verdict.suspects)


def test_noise_keeps_a_culprit_whose_passing_run_was_wrong() -> None:
    runs = [Run(frozenset({"a", "b"}), True), Run(frozenset({"a", "c"}), False), Run(frozenset({"b", "c"}), False)]
    assert explain(runs).suspects == ()  # without noise, nothing explains a failure whose hosts all passed
    assert "a" in explain(runs, noise=1).suspects


def test_groups_take_hosts_of_different_leaves_where_the_plan_says_so() -> None:
    verdict = Verdict((frozenset({"a"}), frozenset({"b"}), frozenset({"c"}), frozenset({"d"})),
                      ("a", "b", "c", "d"), (), {})
    leaves = {"a": frozenset({"leaf1"}), "b": frozenset({"leaf1"}), "c": frozenset({"leaf2"}),
              "d": frozenset({"leaf2"})}
    assert propose(verdict, 2, leaves=leaves) == [["a", "c"], ["b", "d"]]


def _round(path: Path, groups: list[list[str]], culprit: str) -> Path:
    path.write_text("".join(f"{'fail' if culprit in group else 'pass'} {' '.join(group)}\n" for group in groups))
    return path


def test_the_48_host_story_six_groups_of_eight_then_eight_of_six(tmp_path: Path) -> None:
    culprit = "node29"
    first = _round(tmp_path / "round1.txt", [HOSTS[at:at + 8] for at in range(0, 48, 8)], culprit)
    answer = runner.invoke(app, ["bisect", str(first), "--groups", "8", "--size", "6", "--format", "json"])
    assert answer.exit_code == 0, answer.output
    proposal = json.loads(answer.output)
    assert sorted(s["host"] for s in proposal["suspects"]) == HOSTS[24:32]  # the failing group of eight
    split = proposal["next_split"]
    assert [len(group) for group in split] == [6] * 8 and sorted(host for group in split for host in group) == HOSTS
    assert all(len(set(group) & set(HOSTS[24:32])) == 1 for group in split)  # one suspect a group: 8x6
    second = tmp_path / "round2.txt"
    second.write_text(first.read_text() + _round(tmp_path / "r2", split, culprit).read_text())
    settled = runner.invoke(app, ["bisect", str(second)])
    assert (settled.exit_code, settled.output) == (0, f"culprit: {culprit}\n")


def test_bad_runs_are_one_line_naming_where_and_exit_2(tmp_path: Path) -> None:
    cases = {"text.txt": ("pass a b\nmaybe c d\n", "text.txt: line 2: 'maybe' is not an outcome"),
             "json.json": ('[{"hosts": ["a"], "failed": "yes"}]', "json.json: [0].failed: true or false"),
             "empty.txt": ("# nothing\n", "empty.txt: no run in it")}
    for name, (text, said) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        answer = runner.invoke(app, ["bisect", str(path)])
        assert answer.exit_code == 2, answer.output
        assert said in answer.output and len(answer.output.strip().splitlines()) == 1


def test_runs_no_set_explains_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([{"hosts": ["a"], "failed": True}, {"hosts": ["a"], "failed": False}]))
    assert parse_runs(path.read_text(), "runs.json") == [Run(frozenset({"a"}), True), Run(frozenset({"a"}), False)]
    assert runner.invoke(app, ["bisect", str(path)]).exit_code == 1


def test_with_the_plan_a_group_is_topped_up_with_hosts_of_other_leaves(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    with plan.open("w") as out:
        write_ndt(fat_tree(PRESETS["tiny"]), out)  # pod01's hosts hang from pod01's leaves, pod02's from pod02's
    runs = _round(tmp_path / "runs.txt", [[f"pod0{pod}-node0{node}" for pod in (1, 2) for node in (1, 2, 3)],
                                          ["pod01-node04", "pod02-node04"]], "pod01-node04")
    asked = ["bisect", str(runs), "--groups", "2", "--size", "2", "--format", "json"]
    blind = json.loads(runner.invoke(app, asked).output)["next_split"]
    planned = json.loads(runner.invoke(app, [*asked, "--plan", str(plan)]).output)["next_split"]
    assert blind == [["pod01-node04", "pod01-node01"], ["pod02-node04", "pod01-node02"]]
    assert planned == [["pod01-node04", "pod02-node01"], ["pod02-node04", "pod01-node01"]]


@settings(max_examples=100, deadline=None)
@given(instances(), st.data())
def test_the_classes_kept_as_hosts_are_placed_are_the_ones_computed_anew(
        instance: tuple[list[Run], frozenset[str], int, int], data: st.DataObject) -> None:
    runs, _, culprits, noise = instance
    verdict = explain(runs, culprits, noise)
    classes = _Classes(verdict.explanations)
    split: list[list[str]] = [[], [], []]
    for host in verdict.suspects:
        at = data.draw(st.integers(0, 2))
        tried = classes.after(host, at)
        classes.place(host, at)
        split[at].append(host)
        assert tried == classes.value
        assert math.isclose(classes.value, expected_suspects(verdict.explanations, split) * len(verdict.explanations))


def test_a_large_undivided_run_is_split_evenly() -> None:
    """2,048 suspects (with the classes kept as hosts are placed, not 2048 x 8 x 2048 x 8 set operations)."""
    verdict = explain([Run(frozenset(f"node{i:04d}" for i in range(2048)), True)])
    split = propose(verdict, 8)
    assert sorted(len(group) for group in split) == [256] * 8
    assert expected_suspects(verdict.explanations, split) == 256
