"""numpy and pyarrow are paid for only by what reads telemetry."""

from __future__ import annotations

import subprocess
import sys

LOADED = """
import sys
import fabric.cli.app
import fabric.telemetry.columns, fabric.telemetry.errors, fabric.telemetry.records, fabric.telemetry.settings
print(sorted(m for m in ("numpy", "pyarrow") if m in sys.modules))
import fabric.telemetry.window
print(sorted(m for m in ("numpy", "pyarrow") if m in sys.modules))
import fabric.telemetry.parse
print(sorted(m for m in ("numpy", "pyarrow") if m in sys.modules))
"""


def test_the_command_line_and_the_records_load_neither_and_only_the_reader_loads_pyarrow() -> None:
    done = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[]", "['numpy']", "['numpy', 'pyarrow']"], done.stdout + done.stderr
