"""A simulated NVIDIA UFM over a wiring plan: REST API, events, faults, actions and jobs.

Public API:
- :class:`SimState` (``state.py``): the simulated UFM's state; :class:`SimSettings`; :class:`SimClock`;
  :class:`TelemetrySettings` (``telemetry.py``): what UFM Telemetry's counters do (``SimSettings.telemetry``).
- :func:`create_app` (``app.py``): the FastAPI app serving a state; :class:`AuthSettings`.
- :func:`serve` (``server.py``): run it on loopback in a background thread, yielding the base URL.
- :func:`load_scenario` / :func:`parse_scenario` (``scenario.py``): timed fault steps from TOML or YAML;
  the step kinds are in ``faults.py``.
"""

from fabric.simulator.app import create_app
from fabric.simulator.auth import AuthSettings
from fabric.simulator.clock import SimClock
from fabric.simulator.events import EventShape
from fabric.simulator.scenario import Scenario, ScenarioError, load_scenario, parse_duration, parse_scenario
from fabric.simulator.server import RunningServer, serve
from fabric.simulator.state import SimSettings, SimState, TargetError
from fabric.simulator.telemetry import TelemetrySettings

__all__ = [
    "AuthSettings",
    "EventShape",
    "RunningServer",
    "Scenario",
    "ScenarioError",
    "SimClock",
    "SimSettings",
    "SimState",
    "TargetError",
    "TelemetrySettings",
    "create_app",
    "load_scenario",
    "parse_duration",
    "parse_scenario",
    "serve",
]
