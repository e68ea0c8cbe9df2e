"""The configuration (TOML and ``FABRIC_*`` variables) and the simulator's scenario files, corrupted: a configuration,
or a ``ConfigError`` whose every line names the file or a variable; a scenario, or one ``ScenarioError``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from unittest import mock

from fuzz_support import CONTROL, NASTY, corrupted, corrupted_json, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from fabric.config import ConfigError, ServiceConfig, load_config
from fabric.simulator.scenario import ScenarioError, load_scenario

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "config.toml"
SCENARIOS = sorted((REPO / "examples" / "scenarios").glob("*.y*ml")) + sorted(
    (REPO / "examples" / "scenarios").glob("*.toml"))


def _variables(model: Any = ServiceConfig, prefix: str = "FABRIC_") -> list[str]:
    """Every ``FABRIC_*`` name the configuration reads: a section's (JSON), and each of its keys'."""
    names = []
    for name, field in model.model_fields.items():
        variable = f"{prefix}{name.upper()}"
        names.append(variable)
        if isinstance(field.annotation, type) and hasattr(field.annotation, "model_fields"):
            names += _variables(field.annotation, variable + "__")
    return names


VALID = {"labels": ["a", "b"], "priorities": {"9": "Highest"}, "jira": {"project": "NET", "labels": ["x"]}}
VALUES = (st.sampled_from(NASTY) | st.text(max_size=20) | st.sampled_from(list(VALID.values())).flatmap(
    corrupted_json) | st.sampled_from([json.dumps(value) for value in VALID.values()]))


def _loaded(path: Path | None) -> None:
    """A configuration, or a ``ConfigError`` each line of which names the file or (for none) a variable."""
    try:
        load_config(path)
    except ConfigError as refused:
        for problem in refused.problems:
            assert "\n" not in problem
            assert problem.startswith(("FABRIC_", str(path)) if path is not None else "FABRIC_"), problem


@fuzz_settings(150)
@given(st.data())
def test_a_config_file_corrupted_is_loaded_or_refused_naming_the_file(tmp_path_factory: Any,
                                                                      data: st.DataObject) -> None:
    path = tmp_path_factory.mktemp("config") / "config.toml"
    path.write_bytes(data.draw(corrupted(EXAMPLE.read_text())).encode("utf-8", "surrogatepass"))
    with mock.patch.dict(os.environ, clear=False):
        for name in [name for name in os.environ if name.upper().startswith("FABRIC_")]:
            del os.environ[name]
        _loaded(path)


@fuzz_settings(250)
@given(st.dictionaries(st.sampled_from(_variables()) | st.sampled_from(["FABRIC_X__Y", "FABRIC_", "fabric_ufm__url"]),
                       VALUES, min_size=1, max_size=3))
def test_any_fabric_variables_are_loaded_or_refused_naming_the_variable(variables: dict[str, str]) -> None:
    # The environment carries no NUL, nor text that is not UTF-8.
    settable = {name: value.replace("\x00", "") for name, value in variables.items()}
    with mock.patch.dict(os.environ, clear=False):
        for name in [name for name in os.environ if name.upper().startswith("FABRIC_")]:
            del os.environ[name]
        os.environ.update(settable)
        _loaded(None)


@fuzz_settings(150)
@given(st.data(), st.sampled_from(SCENARIOS))
def test_a_scenario_file_corrupted_is_read_or_refused(tmp_path_factory: Any, data: st.DataObject,
                                                      example: Path) -> None:
    path = tmp_path_factory.mktemp("scenario") / example.name
    text = data.draw(corrupted(example.read_text()) | st.sampled_from(CONTROL))
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        load_scenario(path)
    except ScenarioError as refused:
        assert "\n" not in str(refused)
