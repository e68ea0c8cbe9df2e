"""Scenario files: timed fault steps, in TOML or YAML.

```toml
name = "leaf-spine cable flaps, then dies"
description = "optional text"
seed = 7                      # optional: reseeds the simulator's random choices

[[steps]]
at = "90s"                    # from the scenario's start: 500ms, 90s, 10m, 2h, 1h30m, or plain seconds
fault = "flap"                # one of fabric.simulator.faults.STEP_TYPES
link = "pod01-leaf01/5"       # the step's own parameters follow
cycles = 5
period = "20s"
```

YAML has the same keys (``steps:`` a list of mappings).  Targets are named as ``<switch>/<port>``, an
adapter's name (``pod01-node01 mlx5_0``), a UFM port or link name (``<guid>_<n>``, ``<guid>_<n>:<guid>_<n>``),
a switch or host name, or ``random`` / ``random:switch`` / ``random:host`` (seeded).
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
import types
import typing
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fabric import durations
from fabric.errors import quoted
from fabric.simulator.clock import later
from fabric.simulator.faults import STEP_TYPES
from fabric.simulator.state import SimState, TargetError
from fabric.simulator.steps import Step
from topology import strictjson
from topology.errors import InputError
from topology.inputs import CONFIGURATION, read_input
from topology.strictjson import JsonError


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message says where and why."""


def parse_duration(value: object) -> float:
    """Seconds from ``"90s"``, ``"10m"``, ``"1h30m"``, ``"500ms"``, ``"2.5s"`` or a plain number, at most ten
    years (``fabric.durations.LONGEST``, which the simulated clock's ``MAX_SPAN_S`` is); ValueError otherwise."""
    return durations.parse_duration(value).total_seconds()


@dataclass(frozen=True, slots=True)
class TimedStep:
    at: float
    step: Step


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    steps: tuple[TimedStep, ...]
    description: str = ""
    seed: int | None = None
    source: str = "<scenario>"

    @property
    def length(self) -> float:
        """Seconds from the start to the last step (later consequences, e.g. a reboot's end, not counted)."""
        return max((s.at for s in self.steps), default=0.0)

    def schedule(self, state: SimState, delay: float = 0.0) -> None:
        """Queue every step on ``state``'s clock, ``delay`` seconds from now plus the step's ``at``.

        All or nothing: a scenario whose last step would fall past the clock's horizon raises ``TargetError``
        before any step is queued."""
        with state.lock:
            try:
                later(state.now(), delay + self.length)
            except ValueError as exc:
                raise TargetError(f"{self.source}: {exc}") from None
            if self.seed is not None:
                state.rng.seed(self.seed)
            for index, timed in enumerate(self.steps):
                label = f"{self.name} step {index + 1}: {timed.step.label()}"
                state.schedule(delay + timed.at, label, functools.partial(timed.step.apply, state))


# ---------------------------------------------------------------------------------------------- parsing


def load_scenario(path: Path | str) -> Scenario:
    """Read a ``.toml``, ``.yaml`` or ``.yml`` scenario file."""
    file = Path(path)
    try:
        text = read_input(file, CONFIGURATION).decode("utf-8")
    except InputError as exc:
        raise ScenarioError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{file}: not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    suffix = file.suffix.lower()
    try:
        if suffix == ".toml":
            data: Any = strictjson.bounded(lambda: tomllib.loads(text))
        elif suffix in (".yaml", ".yml"):
            data = strictjson.bounded(lambda: yaml.load(text, Loader=_StrictYamlLoader))  # a SafeLoader
        else:
            raise ScenarioError(f"{file}: a scenario is a .toml, .yaml or .yml file")
    except JsonError as exc:  # nested deeper than any scenario
        raise ScenarioError(f"{file}: {exc}") from None
    except yaml.YAMLError as exc:  # its own message spans lines, the text and a caret: its problem and line only
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise ScenarioError(f"{file}{where}: not valid YAML: {problem}") from None
    except ValueError as exc:  # TOMLDecodeError, or an integer of > 4300 digits
        raise ScenarioError(f"{file}: not valid {suffix[1:].upper()}: {exc}") from exc
    return parse_scenario(data, str(file))


class _StrictYamlLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping, as TOML and the project's JSON decoder do
    (PyYAML keeps the last)."""


def _unique_keys(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # ``<<: *defaults``: keys given here override those merged
            continue
        key = loader.construct_object(key_node)
        if not isinstance(key, Hashable):  # a list as a key: refused by ``construct_mapping`` below
            continue
        if key in seen:
            raise yaml.constructor.ConstructorError("while reading a mapping", node.start_mark,
                                                    f"the key {quoted(key)} is given twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node)


_StrictYamlLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_keys)


def parse_scenario(data: object, source: str = "<scenario>") -> Scenario:
    """Build a scenario from decoded TOML/YAML/JSON (the admin API posts the same structure)."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: a scenario is a table/mapping with a 'steps' list")
    extra = set(data) - {"name", "description", "seed", "steps"}
    if extra:
        raise ScenarioError(f"{source}: unknown keys {sorted(extra)} (name, description, seed, steps)")
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise ScenarioError(f"{source}: 'steps' must be a non-empty list")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ScenarioError(f"{source}: 'seed' must be an integer")
    for key in ("name", "description"):
        if data.get(key) is not None and not isinstance(data[key], str):  # 0, false and [] are not text either
            raise ScenarioError(f"{source}: '{key}' must be text")
    steps = tuple(parse_step(raw, f"{source}: step {i + 1}") for i, raw in enumerate(raw_steps))
    ordered = tuple(sorted(steps, key=lambda s: s.at))
    return Scenario(str(data.get("name") or Path(source).stem), ordered, str(data.get("description") or ""),
                    seed, source)


def parse_step(raw: object, where: str) -> TimedStep:
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"{where}: a step is a table/mapping")
    values = dict(raw)
    kind = values.pop("fault", None)
    if not isinstance(kind, str) or kind not in STEP_TYPES:
        raise ScenarioError(f"{where}: 'fault' must be one of {', '.join(sorted(STEP_TYPES))}, got {kind!r}")
    try:
        at = parse_duration(values.pop("at", 0))
    except ValueError as exc:
        raise ScenarioError(f"{where}: 'at': {exc}") from exc
    return TimedStep(at, build_step(STEP_TYPES[kind], values, f"{where} ({kind})"))


def build_step(cls: type[Step], values: Mapping[str, object], where: str) -> Step:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(values) - set(fields)
    if unknown:
        raise ScenarioError(f"{where}: unknown parameters {sorted(unknown)} (known: {', '.join(fields)})")
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        metadata = fields[name].metadata
        try:
            kwargs[name] = converted = _convert(value, hints[name], bool(metadata.get("duration")))
            if "range" in metadata and converted is not None:
                _check_range(converted, *metadata["range"])
        except ValueError as exc:
            raise ScenarioError(f"{where}: '{name}': {exc}") from exc
    step = cls(**kwargs)
    try:
        step.check()
    except ValueError as exc:
        raise ScenarioError(f"{where}: {exc}") from exc
    return step


def _check_range(value: Any, low: float, high: float) -> None:
    if not low <= value <= high:  # NaN is never in range
        raise ValueError(f"must be from {low:,} to {high:,}, got {quoted(value)}")


def _convert(value: object, hint: Any, duration: bool) -> object:
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if value is None:
        if type(None) in options:
            return None
        raise ValueError("a value is required")
    wanted = next(o for o in options if o is not type(None))
    if duration:
        return parse_duration(value)
    origin = typing.get_origin(wanted)
    if origin is list:
        (item,) = typing.get_args(wanted)
        items = value if isinstance(value, list) else [value]
        return [_convert(v, item, False) for v in items]
    if wanted is bool:
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value
    if wanted is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {value!r}")
        return value
    if wanted is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"expected a number, got {value!r}")
        try:
            return float(value)
        except OverflowError:  # an integer beyond any float
            raise ValueError(f"out of range: {quoted(value)}") from None
    if wanted is str:
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise ValueError(f"expected text, got {value!r}")
        return str(value)
    raise ValueError(f"unsupported parameter type {wanted!r}")
