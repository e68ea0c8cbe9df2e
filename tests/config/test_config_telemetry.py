"""``[telemetry]``: UFM Telemetry's reader, its keys checked one by one and all or nothing."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from fabric.config import ConfigError, load_config
from fabric.ufm.address import TELEMETRY_MAX_BYTES


def test_off_by_default_and_pointed_at_the_ufm_hosts_secondary_instance() -> None:
    telemetry = load_config(None).telemetry
    assert not telemetry.enabled
    assert (telemetry.url, telemetry.instance) == ("http://127.0.0.1:9002", "low_freq_debug")
    assert (telemetry.interval, telemetry.timeout) == (timedelta(minutes=5), timedelta(seconds=30))
    assert (telemetry.max_bytes, telemetry.ca_bundle, telemetry.insecure) == (TELEMETRY_MAX_BYTES, None, False)


def test_the_values_reach_the_client(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, '[telemetry]\nenabled = true\nurl = "https://ufm.example:9002/"\n'
                                          'instance = "pdr"\ninterval = "1m"\ntimeout = "5s"\nmax_bytes = 1000\n'
                                          'insecure = true\n'))
    client = config.telemetry.client()
    assert (client.url, client.path, client.max_bytes) == ("https://ufm.example:9002", "/csv/xcset/pdr", 1000)
    assert config.telemetry.interval == timedelta(minutes=1) and config.telemetry.enabled


def test_the_environment_sets_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_TELEMETRY__INTERVAL", "10m")
    assert load_config(None).telemetry.interval == timedelta(minutes=10)


@pytest.mark.parametrize(("text", "expected"), [
    ('interval = "30s"', "telemetry.interval: must be at least 1m (UFM Telemetry is not read faster), got 30s"),
    ('url = "ufm.example:9002"', "telemetry.url: the URL must start with http:// or https://"),
    ('instance = "a/b"', "telemetry.instance: a telemetry instance is a name without '/'"),
    ('max_bytes = 0', "telemetry.max_bytes: Input should be greater than or equal to 1"),
    ('timeout = "2h"', "telemetry.timeout: a timeout must be more than 0 and at most 3600 seconds"),
    ('enable = true', "telemetry.enable: unknown key (did you mean 'enabled'?)"),
])
def test_a_bad_key_is_named_and_nothing_is_half_applied(tmp_path: Path, text: str, expected: str) -> None:
    path = _write(tmp_path, f'[telemetry]\nenabled = true\n{text}\n')
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert len(refused.value.problems) == 1 and refused.value.problems[0].startswith(f"{path}: {expected}"), \
        refused.value.problems


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path
