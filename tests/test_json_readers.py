"""No JSON is read but by ``topology.strictjson``: a ``json.loads``, a response's ``.json()`` or pydantic's own
parser anywhere else would take the last of two keys, NaN, and any depth, as the project did before issue 21."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOOSE = re.compile(r"\bjson\.loads?\(|\.json\(\)|JSONDecoder\(|\bfrom_json\(|validate_json\(|\byaml\.(?:safe_)?load\(")
ALLOWED = {
    "topology/strictjson.py": "the decoder itself",
    "fabric/simulator/scenario.py": "yaml.load with the loader that refuses a key given twice",
}


def test_every_json_read_goes_through_strictjson() -> None:
    found = []
    for package in ("topology", "tickets", "fabric"):
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                code = line.split("#", 1)[0]
                if LOOSE.search(code) and relative not in ALLOWED and not code.lstrip().startswith(('"', "`")):
                    found.append(f"{relative}:{number}: {line.strip()}")
    assert found == []


def test_the_scenario_yaml_reader_uses_the_strict_loader() -> None:
    text = (REPO / "fabric/simulator/scenario.py").read_text()
    assert re.findall(r"\byaml\.(?:safe_)?load\([^)]*\)", text) == ["yaml.load(text, Loader=_StrictYamlLoader)"]
