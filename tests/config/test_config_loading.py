"""``fabric.config``: one TOML file plus FABRIC_* variables, validated all at once, secrets kept out."""

from __future__ import annotations

import json
import re
import tomllib
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric.config import ConfigError, ServiceConfig, format_duration, load_config, parse_duration
from fabric.controller.engine import EngineSettings
from fabric.controller.writes import WriteSettings
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import RuleSettings, Threshold
from fabric.ufm.client import PortActionMethod
from fabric.wiring import engine_settings
from topology.guard import GuardSettings

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "config.toml"


def write(tmp_path: Path, text: str, name: str = "config.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(path: Path | None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value.problems


# --- defaults and the dataclasses they build -----------------------------------------------------------------


def test_defaults_build_the_services_own_defaults() -> None:
    config = load_config()
    assert config.policy_config() == PolicyConfig()
    assert config.rule_settings() == RuleSettings()
    assert config.guard_settings() == GuardSettings()
    assert engine_settings(config) == EngineSettings()
    assert config.store.url == "sqlite:///fabric-remediation.db"
    assert config.tickets.backend == "local"
    assert config.daemon.interval == timedelta(seconds=30)
    assert config.policy.dry_run is True


def test_the_example_file_holds_every_key_at_its_default() -> None:
    assert load_config(EXAMPLE) == load_config()
    text = EXAMPLE.read_text()

    def keys(model: type[object], prefix: str) -> list[str]:
        found: list[str] = []
        for name, field in model.model_fields.items():  # type: ignore[attr-defined]
            annotation = field.annotation
            if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
                found += keys(annotation, f"{prefix}{name}.")
            else:
                found.append(f"{prefix}{name}")
        return found

    for dotted in keys(ServiceConfig, ""):
        key = dotted.rsplit(".", 1)[-1]
        assert re.search(rf"^#? ?{key} = ", text, re.MULTILINE), f"{dotted} is not in examples/config.toml"


def test_the_example_comments_every_key() -> None:
    lines = EXAMPLE.read_text().splitlines()
    for index, line in enumerate(lines):
        if re.match(r"^[a-z_]+ = ", line):
            above = index - 1
            while re.match(r"^[a-z_]+ = ", lines[above]):  # keys grouped under one comment
                above -= 1
            assert lines[above].startswith("#"), f"no comment above {line!r}"


def test_file_values_reach_every_dataclass(tmp_path: Path) -> None:
    path = write(tmp_path, """
[fabric]
name = "west"
[policy]
dry_run = false
host_links_ticket_only = false
max_strikes = 4
probation = "3d"
storm_components = 40
storm_window = "20m"
storm_quiet_period = "1h"
[rules]
flap_cycles = 4
flap_window = "6h"
burst_cycles = 6
burst_window = "5m"
downtime = "10s"
both_ends_window = 30
ber_high_count = 3
ber_high_window = "1h30m"
errors_count = 5
errors_window = "4h"
attribution_window = "15m"
settle = "500ms"
[escalation]
max_resets = 1
reset_window = "3d"
reset_settle = "20m"
rules = ["flap", "ber_high"]
[guard]
c = 0.8
cap_fraction = 0.01
cap_floor = 4
hourly_limit = 6
[ufm]
url = "https://ufm.example.net/"
auth = "token"
method = "isolate"
write_attempts = 5
write_backoff = "30s"
job_wait = "0s"
job_deadline = "2m"
[daemon]
interval = "2m"
""")
    config = load_config(path)
    assert config.policy_config() == PolicyConfig(
        dry_run=False, host_links_ticket_only=False, max_strikes=4, probation=timedelta(days=3),
        storm_components=40, storm_window=timedelta(minutes=20), storm_quiet_period=timedelta(hours=1),
        resets=ResetLadder(max_resets=1, window=timedelta(days=3), settle=timedelta(minutes=20),
                           rules=frozenset({"flap", "ber_high"})))
    assert config.rule_settings() == RuleSettings(
        flap_cycles=4, flap_window=timedelta(hours=6), burst_cycles=6, burst_window=timedelta(minutes=5),
        downtime=timedelta(seconds=10), both_ends_window=timedelta(seconds=30),
        counted={"ber_high": Threshold(3, timedelta(minutes=90)), "port_errors": Threshold(5, timedelta(hours=4))},
        attribution_window=timedelta(minutes=15), settle=timedelta(milliseconds=500))
    assert config.guard_settings() == GuardSettings(c=0.8, cap_fraction=0.01, cap_floor=4, hourly_limit=6)
    engine = engine_settings(config, epoch=7)
    assert (engine.fabric, engine.method, engine.epoch) == ("west", PortActionMethod.ISOLATE, 7)
    assert engine.policy == config.policy_config() and engine.rules == config.rule_settings()
    assert engine.writes == WriteSettings(attempts=5, backoff=timedelta(seconds=30), job_wait=timedelta(),
                                          job_deadline=timedelta(minutes=2))
    assert config.ufm.url == "https://ufm.example.net"
    assert config.daemon.interval == timedelta(minutes=2)


def test_a_reset_ladder_that_cannot_be_is_refused_naming_its_key(tmp_path: Path) -> None:
    path = write(tmp_path, '[escalation]\nmax_resets = -1\nreset_settle = "0s"\nrules = ["flap", "temperature"]\n')
    assert problems(path) == [
        f"{path}: escalation.max_resets: Input should be greater than or equal to 0 (got -1)",
        f"{path}: escalation.reset_settle: must be longer than zero, got 0s",
        f"{path}: escalation.rules: a reset cannot answer 'temperature': the rules a reset may answer are "
        "ber_critical, ber_high, flap, high_retransmission, link_down, packet_drops, port_errors, unhealthy_port"]


# --- the environment -----------------------------------------------------------------------------------------


def test_environment_overrides_the_file_key_by_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, '[policy]\ndry_run = true\nmax_strikes = 4\n[rules]\nflap_window = "6h"\n')
    monkeypatch.setenv("FABRIC_POLICY__DRY_RUN", "false")
    monkeypatch.setenv("FABRIC_RULES__SETTLE", "2m")
    monkeypatch.setenv("FABRIC_TICKETS__JIRA__ISSUE_TYPE", "Incident")
    monkeypatch.setenv("fabric_guard__c", "0.9")
    config = load_config(path)
    assert config.policy.dry_run is False
    assert config.policy.max_strikes == 4, "keys the environment does not name keep the file's value"
    assert config.rules.flap_window == timedelta(hours=6)
    assert config.rules.settle == timedelta(minutes=2)
    assert config.tickets.jira.issue_type == "Incident"
    assert config.guard.c == 0.9


def test_environment_alone_without_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_STORE__URL", "postgresql+psycopg://fabric@db/fabric")
    monkeypatch.setenv("FABRIC_FABRIC__NAME", "east")
    config = load_config()
    assert config.store.url == "postgresql+psycopg://fabric@db/fabric"
    assert config.fabric.name == "east"


def test_unrelated_fabric_variables_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # Single-underscore variables belong to other tools (tests, the CLI's --ufm options, secrets).
    monkeypatch.setenv("FABRIC_TEST_POSTGRES_URL", "postgresql://x")
    monkeypatch.setenv("FABRIC_UFM_URL", "https://elsewhere")
    assert load_config() == ServiceConfig()


def test_a_bad_environment_value_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_POLICY__STORM_WINDOW", "10 minutes")
    assert problems(write(tmp_path, "[policy]\ndry_run = true\n")) == [
        "FABRIC_POLICY__STORM_WINDOW: policy.storm_window: not a duration: '10 minutes' "
        "(write e.g. 90s, 10m, 12h, 1h30m, 2d or a number of seconds)"]


def test_typos_in_environment_names_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_POLICY__DRY_RUNN", "false")
    monkeypatch.setenv("FABRIC_POLCY__DRY_RUN", "false")
    found = problems(None)
    assert "FABRIC_POLCY__DRY_RUN: unknown section 'polcy' (did you mean 'policy'?)" in found
    monkeypatch.delenv("FABRIC_POLCY__DRY_RUN")
    assert problems(None) == [
        "FABRIC_POLICY__DRY_RUNN: policy.dry_runn: unknown key (did you mean 'dry_run'?)"]


# --- bad files: every problem, each naming the file and the key ---------------------------------------------


def test_every_problem_is_reported_with_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, """
[policy]
storm_window = "10 minutes"
max_strikes = "x"
storm_windw = "5m"
[polcy]
dry_run = false
[guard]
c = 1.5
cap_fraction = 0.2
""")
    found = problems(path)
    name = str(path)
    assert f"{name}: policy.storm_window: not a duration: '10 minutes' " \
           "(write e.g. 90s, 10m, 12h, 1h30m, 2d or a number of seconds)" in found
    assert any(p.startswith(f"{name}: policy.max_strikes: Input should be a valid integer") for p in found)
    assert f"{name}: policy.storm_windw: unknown key (did you mean 'storm_window'?)" in found
    assert f"{name}: polcy: unknown section (did you mean 'policy'?)" in found
    assert any(p.startswith(f"{name}: guard.c: Input should be less than or equal to 1") for p in found)
    assert any(p.startswith(f"{name}: guard.cap_fraction: Input should be less than or equal to 0.05")
               for p in found)
    assert len(found) == 6


def test_the_example_message_of_the_brief(tmp_path: Path) -> None:
    path = write(tmp_path, '[policy]\nstorm_window = "10 minutes"\n')
    assert problems(path)[0].startswith(f"{path}: policy.storm_window: not a duration: '10 minutes'")


@pytest.mark.parametrize(("text", "expected"), [
    ("[rules]\nflap_cycles = 0\n", "rules.flap_cycles: Input should be greater than or equal to 1"),
    ('[rules]\nflap_window = "0s"\n', "rules.flap_window: must be longer than zero, got 0s"),
    ('[rules]\nsettle = "-5s"\n', "rules.settle: a duration cannot be negative: '-5s'"),
    ("[rules]\nsettle = true\n", "rules.settle: not a duration: True"),
    ('[rules]\nboot_time = "-10m"\n', "rules.boot_time: a duration cannot be negative: '-10m'"),
    ("[rules]\nswitch_fault_cables = 1\n", "rules.switch_fault_cables: Input should be greater than or equal to 2"),
    ('[rules]\nswitch_fault_window = "0s"\n', "rules.switch_fault_window: must be longer than zero, got 0s"),
    ('[rules]\nimmediate_settle = "6m"\n', "rules.immediate_settle: at most 5m (a faulty cable waits this long to "
                                         "be taken out), got 6m"),
    ('[policy]\nstorm_quiet_period = "0s"\n', "policy.storm_quiet_period: must be longer than zero, got 0s"),
    ('[policy]\ndry_run = "sometimes"\n', "policy.dry_run: Input should be a valid boolean"),
    ('[ufm]\nauth = "kerberos"\n', "ufm.auth: Input should be 'basic', 'token' or 'session'"),
    ('[ufm]\nmethod = "unplug"\n', "ufm.method: Input should be 'disable' or 'isolate'"),
    ('[ufm]\nurl = "ufm.example.net"\n', "ufm.url: not an http(s) URL: 'ufm.example.net'"),
    ('[tickets]\nbackend = "jira"\n',
     "tickets: backend is jira but tickets.jira.url and tickets.jira.project are not set"),
    ('[tickets]\nbackend = "jira"\n[tickets.jira]\nurl = "https://jira.example.net"\n',
     "tickets: backend is jira but tickets.jira.project is not set"),
    ('[tickets.jira]\nauth = "cloud"\n',
     "tickets.jira: auth is cloud but tickets.jira.user (the account's e-mail) is not set"),
    ('[tickets.jira]\nlabels = ["two words"]\n',
     "tickets.jira.labels: a Jira label is not empty and has no whitespace"),
    ('[tickets.jira]\ntimeout = "0s"\n', "tickets.jira.timeout: must be longer than zero"),
    ('[fabric]\nname = ""\n', "fabric.name: String should have at least 1 character"),
    ('[fabric]\nname = "lab\\u001fdry-run"\n', "fabric.name: must be printable (no control characters): "
                                              "'lab\\x1fdry-run'"),
    ('[daemon]\ninterval = "0"\n', "daemon.interval: must be longer than zero, got 0s"),
    ("policy = 3\n", "policy: Input should be a valid dictionary or instance of PolicySection"),
])
def test_bad_values(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    found = problems(path)
    assert len(found) == 1 and found[0].startswith(f"{path}: {expected}"), found


def test_a_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, '[policy]\ndry_run = false\nstorm_window = "10m\n')
    (problem,) = problems(path)
    assert problem.startswith(f"{path}: not valid TOML: ") and "line 3" in problem


def test_a_missing_file(tmp_path: Path) -> None:
    assert problems(tmp_path / "nope.toml") == [f"{tmp_path / 'nope.toml'}: no such file"]


def test_nothing_is_half_applied(tmp_path: Path) -> None:
    path = write(tmp_path, '[policy]\ndry_run = false\n[rules]\nsettle = "soon"\n')
    with pytest.raises(ConfigError):
        load_config(path)
    config = ServiceConfig()
    assert config.policy.dry_run is True, "a failed load leaves no trace"
    with pytest.raises(ValueError, match="frozen"):
        config.policy.dry_run = False  # type: ignore[misc]


# --- secrets -------------------------------------------------------------------------------------------------


def test_secrets_in_the_file_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, '[ufm]\nurl = "https://ufm"\npassword = "hunter2"\n[tickets.jira]\ntoken = "t0k"\n')
    found = problems(path)
    assert found == [
        f"{path}: ufm.password: secrets are never read from the file: set FABRIC_UFM__PASSWORD "
        "(or FABRIC_UFM__TOKEN) in the environment, or name a file in ufm.secret_file",
        f"{path}: tickets.jira.token: secrets are never read from the file: set FABRIC_TICKETS__JIRA__TOKEN in the "
        "environment, or name a file in tickets.jira.token_file",
    ]
    assert not any("hunter2" in p or "t0k" in p for p in found)


def test_secrets_in_nested_variables_not_read_from_there_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_UFM__SECRET", "hunter2")
    monkeypatch.setenv("FABRIC_TICKETS__JIRA__PASSWORD", "t0k")
    assert problems(None) == [
        "FABRIC_TICKETS__JIRA__PASSWORD: set FABRIC_TICKETS__JIRA__TOKEN in the environment, or name a file in "
        "tickets.jira.token_file",
        "FABRIC_UFM__SECRET: set FABRIC_UFM__PASSWORD (or FABRIC_UFM__TOKEN) in the environment, or name a file in "
        "ufm.secret_file"]


def test_the_secret_comes_from_the_environment_and_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_UFM_PASSWORD", "hunter2")
    monkeypatch.setenv("FABRIC_UFM_TOKEN", "t0k3n")
    monkeypatch.setenv("FABRIC_UFM__URL", "https://ufm.example.net")
    config = load_config()
    assert config.ufm.secret().get_secret_value() == "hunter2"
    token = config.ufm.model_copy(update={"auth": "token"})
    assert token.secret().get_secret_value() == "t0k3n"
    shown = " ".join([repr(config), str(config), str(config.model_dump()), config.model_dump_json(),
                      repr(config.ufm.secret()), str(config.ufm.secret())])
    assert "hunter2" not in shown and "t0k3n" not in shown


def test_the_secret_file_wins_and_is_read_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "ufm-password"
    secret.write_text("from-the-file\n")
    monkeypatch.setenv("FABRIC_UFM_PASSWORD", "from-the-env")
    config = load_config(write(tmp_path, f'[ufm]\nsecret_file = "{secret}"\n'))
    assert config.ufm.secret().get_secret_value() == "from-the-file"
    secret.unlink()
    with pytest.raises(ConfigError, match="cannot read the UFM password file"):
        config.ufm.secret()


def test_a_missing_secret_says_where_to_put_it() -> None:
    with pytest.raises(ConfigError, match=r"no UFM password: set FABRIC_UFM__PASSWORD or ufm\.secret_file"):
        load_config().ufm.secret()
    with pytest.raises(ConfigError, match="no Jira API token: set FABRIC_TICKETS__JIRA__TOKEN or "):
        load_config().tickets.jira.token()


def test_the_ufm_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_UFM__URL", "https://ufm.example.net")
    monkeypatch.setenv("FABRIC_UFM__AUTH", "session")
    target = load_config().ufm.target()
    assert (target.url, target.mode.value, target.user) == ("https://ufm.example.net", "session", "admin")
    monkeypatch.delenv("FABRIC_UFM__URL")
    with pytest.raises(ConfigError, match=r"ufm\.url: not set"):
        load_config().ufm.target()


# --- durations -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [
    ("12h", 43200), ("10m", 600), ("7s", 7), ("500ms", 0.5), ("2d", 172800), ("1h30m", 5400),
    ("1h 30m", 5400), (" 90s ", 90), ("90", 90), ("2.5s", 2.5), (90, 90), (1.5, 1.5), ("0", 0),
])
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["10 minutes", "", "h", "10x", "5m10", "-5s", "1e3", "nan", "inf"])
def test_not_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@given(st.integers(min_value=0, max_value=10**9))
def test_formatted_durations_read_back(milliseconds: int) -> None:
    value = timedelta(milliseconds=milliseconds)
    assert parse_duration(format_duration(value)) == value


def test_a_dump_reads_back_as_the_same_configuration(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, '[policy]\nstorm_quiet_period = "45m"\n[rules]\nsettle = "1500ms"\n'))
    dumped = config.model_dump(mode="json", exclude_none=True)
    assert dumped["policy"]["storm_quiet_period"] == "45m" and dumped["rules"]["settle"] == "1500ms"
    lines: list[str] = []

    def emit(prefix: str, table: dict[str, object]) -> None:
        scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
        lines.append(f"[{prefix}]")
        for key, value in scalars.items():
            lines.append(f"{key} = {json.dumps(value)}")  # JSON's scalars and arrays are TOML's
        for key, value in table.items():
            if isinstance(value, dict):
                emit(f"{prefix}.{key}", value)

    for section, table in dumped.items():
        emit(section, table)
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)
    assert load_config(write(tmp_path, text, "again.toml")) == config


def test_the_reboot_and_switch_fault_keys_reach_the_rules(tmp_path: Path) -> None:
    path = write(tmp_path, '[rules]\nboot_time = "15m"\nswitch_fault_cables = 6\nswitch_fault_window = "2m"\n')
    rules = load_config(path).rule_settings()
    assert (rules.boot_time, rules.switch_fault_cables, rules.switch_fault_window) == (
        timedelta(minutes=15), 6, timedelta(minutes=2))
    assert rules.longest_settle == timedelta(minutes=16)


def test_the_webhook_secrets_come_from_the_environment_or_a_file_and_never_show(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_config().tickets.webhook_secret() is None and load_config().tickets.webhook_token() is None
    monkeypatch.setenv("FABRIC_TICKETS__WEBHOOK_SECRET", "hmac-key")
    token = tmp_path / "webhook-token"
    token.write_text("bearer-value\n")
    config = load_config(write(tmp_path, f'[tickets]\nwebhook_token_file = "{token}"\n'))
    secret, bearer = config.tickets.webhook_secret(), config.tickets.webhook_token()
    assert secret is not None and secret.get_secret_value() == "hmac-key"
    assert bearer is not None and bearer.get_secret_value() == "bearer-value"
    shown = " ".join([repr(config), str(config.model_dump()), config.model_dump_json(), repr(secret), str(bearer)])
    assert "hmac-key" not in shown and "bearer-value" not in shown


def test_webhook_secrets_in_the_file_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, '[tickets]\nwebhook_secret = "hmac-key"\nwebhook_token = "t0k"\n')
    assert problems(path) == [
        f"{path}: tickets.webhook_secret: secrets are never read from the file: set FABRIC_TICKETS__WEBHOOK_SECRET "
        "in the environment, or name a file in tickets.webhook_secret_file",
        f"{path}: tickets.webhook_token: secrets are never read from the file: set FABRIC_TICKETS__WEBHOOK_TOKEN "
        "in the environment, or name a file in tickets.webhook_token_file",
    ]


def test_the_jira_ticket_fields_are_checked_each_problem_by_its_key(tmp_path: Path) -> None:
    path = write(tmp_path, '[tickets.jira]\npriorities = { "high" = "High", "6" = " " }\nfields = { "" = "x" }\n'
                 '[tickets]\nretry_base = "0s"\n')
    found = [p.partition(": ")[2] for p in problems(path)]  # after the file's name
    assert any(p.startswith("tickets.jira.priorities") and "'high' is not a whole number" in p
               and "'6': the priority name is empty" in p for p in found), found
    assert any(p.startswith("tickets.jira.fields") and "a field name is empty" in p for p in found), found
    assert any(p.startswith("tickets.retry_base") for p in found), found


def test_the_jira_ticket_fields_reach_the_backend(tmp_path: Path) -> None:
    path = write(tmp_path, '[tickets]\nbackend = "jira"\nretry_cap = "5m"\n[tickets.jira]\n'
                 'url = "https://jira.example.net"\nproject = "OPS"\ncomponents = ["Fabric"]\n'
                 'priorities = { "9" = "Highest", "6" = "High" }\nfields = { "Data Centre" = "DC-1" }\n')
    config = load_config(path)
    assert config.tickets.jira.priority_thresholds() == ((6, "High"), (9, "Highest"))
    assert engine_settings(config).outbox.cap == timedelta(minutes=5)


def test_a_lease_must_hold_three_heartbeats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, '[leader]\nlease = "5s"\nheartbeat = "2s"\n')
    assert problems(path) == [f"{path}: leader: leader.lease (5s) must be at least 3 times leader.heartbeat (2s)"]
    zero = write(tmp_path, '[leader]\nheartbeat = "0s"\n', "zero.toml")
    assert problems(zero) == [f"{zero}: leader.heartbeat: must be longer than zero, got 0s"]
    monkeypatch.setenv("FABRIC_LEADER__LEASE", "6s")
    leader = load_config(path).leader
    assert (leader.lease.total_seconds(), leader.heartbeat.total_seconds()) == (6.0, 2.0)
