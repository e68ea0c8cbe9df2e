"""``[api]``: the HTTP API's address and its admin token, a secret read like the others (never a field)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.config import ConfigError, load_config


def test_the_api_listens_on_loopback_by_default_and_has_no_token() -> None:
    config = load_config()
    assert (config.api.host, config.api.port, config.api.admin_token_file) == ("127.0.0.1", 8080, None)
    assert config.api.admin_token() is None


def test_the_token_comes_from_the_nested_variable_and_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_API__ADMIN_TOKEN", "s3cr3t-t0k3n")
    monkeypatch.setenv("FABRIC_API__PORT", "9100")
    config = load_config()
    token = config.api.admin_token()
    assert token is not None and token.get_secret_value() == "s3cr3t-t0k3n"
    assert config.api.port == 9100
    shown = " ".join([repr(config), str(config.model_dump()), config.model_dump_json(), repr(token)])
    assert "s3cr3t-t0k3n" not in shown


def test_the_token_file_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "api-token"
    secret.write_text("from-the-file\n")
    monkeypatch.setenv("FABRIC_API__ADMIN_TOKEN", "from-the-env")
    path = tmp_path / "config.toml"
    path.write_text(f'[api]\nadmin_token_file = "{secret}"\n')
    token = load_config(path).api.admin_token()
    assert token is not None and token.get_secret_value() == "from-the-file"
    secret.write_text("  \n")
    with pytest.raises(ConfigError, match=r"api\.admin_token_file: the API admin token file .* is empty"):
        load_config(path).api.admin_token()


def test_a_token_in_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[api]\nadmin_token = "hunter2"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.problems == [
        f"{path}: api.admin_token: secrets are never read from the file: set FABRIC_API__ADMIN_TOKEN in the "
        "environment, or name a file in api.admin_token_file"]


def test_a_bad_port_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_API__PORT", "70000")
    with pytest.raises(ConfigError, match=r"FABRIC_API__PORT: api\.port: Input should be less than or equal to 65535"):
        load_config()
