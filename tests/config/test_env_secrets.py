"""Every secret under its ``FABRIC_<SECTION>__<KEY>`` name and, for the three that had one, under its older
single-underscore name; both names set to different values is refused, naming both; no value ever shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from fabric import wiring
from fabric.cli.app import app
from fabric.config import ENV_SECRETS, ConfigError, ServiceConfig, load_config
from fabric.envsecrets import CREDENTIALS_DIRECTORY, EnvSecret
from fabric.ufm.auth import BasicAuth, TokenAuth
from fabric.ufm.connect import AuthMode, ConnectError, UfmTarget

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "config.toml"

READERS: dict[tuple[str, ...], Callable[[ServiceConfig], SecretStr | None]] = {
    ("ufm", "password"): lambda config: config.ufm.secret(),
    ("ufm", "token"): lambda config: config.ufm.model_copy(update={"auth": "token"}).secret(),
    ("tickets", "jira", "token"): lambda config: config.tickets.jira.token(),
    ("api", "admin_token"): lambda config: config.api.admin_token(),
    ("tickets", "webhook_secret"): lambda config: config.tickets.webhook_secret(),
    ("tickets", "webhook_token"): lambda config: config.tickets.webhook_token(),
}
NAMES = [(path, name) for path, (env, _) in ENV_SECRETS.items() for name in env.names()]
ALIASED = [env for env, _ in ENV_SECRETS.values() if env.alias is not None]


def conflict_line(env: EnvSecret) -> str:
    return (f"{env.name} and {env.alias} are both set, to different values: unset one ({env.alias} is the older "
            f"name of {env.name})")


def test_every_secret_is_named_after_its_key_and_the_three_older_names_are_aliases() -> None:
    assert set(READERS) == set(ENV_SECRETS)
    for path, (env, _) in ENV_SECRETS.items():
        assert env.name == "FABRIC_" + "__".join(path).upper()
    assert {env.alias: env.name for env in ALIASED} == {
        "FABRIC_UFM_PASSWORD": "FABRIC_UFM__PASSWORD", "FABRIC_UFM_TOKEN": "FABRIC_UFM__TOKEN",
        "FABRIC_JIRA_TOKEN": "FABRIC_TICKETS__JIRA__TOKEN"}


@pytest.mark.parametrize(("path", "name"), NAMES, ids=[name for _, name in NAMES])
def test_each_secret_is_read_under_each_of_its_names_and_never_shows(path: tuple[str, ...], name: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, "s3cret-value")
    config = load_config()
    secret = READERS[path](config)
    assert secret is not None and secret.get_secret_value() == "s3cret-value"
    shown = " ".join([repr(config), str(config.model_dump()), config.model_dump_json(), repr(secret), str(secret)])
    assert "s3cret-value" not in shown


@pytest.mark.parametrize("env", ALIASED, ids=[env.name for env in ALIASED])
def test_both_names_set_to_different_values_is_refused_naming_both(env: EnvSecret,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert env.alias is not None
    monkeypatch.setenv(env.name, "rotated-value")
    monkeypatch.setenv(env.alias, "stale-value")
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert caught.value.problems == [conflict_line(env)]
    monkeypatch.setenv(env.alias, "rotated-value")  # the same value under both names: a migration under way
    path = next(path for path, (found, _) in ENV_SECRETS.items() if found == env)
    secret = READERS[path](load_config())
    assert secret is not None and secret.get_secret_value() == "rotated-value"


def test_config_check_refuses_a_conflict_in_one_line_without_the_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_UFM__PASSWORD", "rotated-value")
    monkeypatch.setenv("FABRIC_UFM_PASSWORD", "stale-value")
    result = CliRunner().invoke(app, ["config", "check", str(EXAMPLE)])
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line == "fabricctl: error: " + conflict_line(ENV_SECRETS[("ufm", "password")][0])


def test_config_check_show_and_their_errors_print_no_secret(tmp_path: Path, tiny_plan: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    wiring.open_store(f"sqlite:///{tmp_path / 'fabric.db'}", fabric="default").close()
    for name, value in (("FABRIC_FABRIC__PLAN", str(tiny_plan)), ("FABRIC_UFM__URL", "https://ufm.example"),
                        ("FABRIC_STORE__URL", f"sqlite:///{tmp_path / 'fabric.db'}")):  # what run needs besides
        monkeypatch.setenv(name, value)
    values = {name: f"value-of-{name.lower()}" for _, name in NAMES}
    for env in ALIASED:  # both spellings of one secret must agree
        assert env.alias is not None
        values[env.alias] = values[env.name]
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    bad = tmp_path / "bad.toml"
    bad.write_text('[policy]\ndry_runn = true\n')
    outputs = [CliRunner().invoke(app, args) for args in (
        ["config", "check", str(EXAMPLE)], ["config", "show", str(EXAMPLE)],
        ["config", "show", str(EXAMPLE), "--format", "json"], ["config", "check", str(bad)])]
    assert [result.exit_code for result in outputs] == [0, 0, 0, 2], [result.output for result in outputs]
    for result in outputs:
        assert not [value for value in values.values() if value in result.output], result.output


def test_the_ufm_connection_reads_either_name_and_refuses_a_conflict(monkeypatch: pytest.MonkeyPatch) -> None:
    target = UfmTarget("https://ufm.example.net")
    monkeypatch.setenv("FABRIC_UFM__PASSWORD", "new-password")
    assert target.auth() == BasicAuth("admin", "new-password")
    monkeypatch.setenv("FABRIC_UFM_TOKEN", "old-token")
    assert UfmTarget(target.url, AuthMode.TOKEN).auth() == TokenAuth("old-token")
    monkeypatch.setenv("FABRIC_UFM_PASSWORD", "old-password")
    with pytest.raises(ConnectError) as caught:
        target.auth()
    assert str(caught.value) == conflict_line(ENV_SECRETS[("ufm", "password")][0])
    assert "new-password" not in str(caught.value) and "old-password" not in str(caught.value)


@pytest.fixture
def credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory of credentials, as systemd's ``LoadCredential=`` makes one and names it."""
    directory = tmp_path / "credentials"
    directory.mkdir()
    monkeypatch.setenv(CREDENTIALS_DIRECTORY, str(directory))
    return directory


@pytest.mark.parametrize("path", list(ENV_SECRETS), ids=[env.name for env, _ in ENV_SECRETS.values()])
def test_each_secret_is_read_from_the_credential_named_like_its_variable(path: tuple[str, ...],
                                                                       credentials: Path) -> None:
    env, _ = ENV_SECRETS[path]
    (credentials / env.name).write_text("  cr3dential-value\n")
    config = load_config()
    secret = READERS[path](config)
    assert secret is not None and secret.get_secret_value() == "cr3dential-value"
    assert "cr3dential-value" not in " ".join([repr(config), config.model_dump_json(), repr(secret)])


def test_no_credential_of_its_name_leaves_the_secret_unset(credentials: Path) -> None:
    (credentials / "FABRIC_UFM_PASSWORD").write_text("an alias is no credential name")
    assert load_config().api.admin_token() is None
    with pytest.raises(ConfigError, match="no UFM password"):
        load_config().ufm.secret()


@pytest.mark.parametrize("name", ["FABRIC_UFM__PASSWORD", "FABRIC_UFM_PASSWORD"])
def test_a_credential_and_a_variable_of_different_values_are_refused(name: str, credentials: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    credential = credentials / "FABRIC_UFM__PASSWORD"
    credential.write_text("rotated-value")
    monkeypatch.setenv(name, "stale-value")
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert caught.value.problems == [f"{name} and the credential {credential} are both set, to different values: "
                                     "unset or remove one"]
    monkeypatch.setenv(name, "rotated-value")  # the same value in both: a move to credentials under way
    assert load_config().ufm.secret().get_secret_value() == "rotated-value"


def test_an_empty_or_unreadable_credential_is_refused_not_taken_as_unset(credentials: Path) -> None:
    empty = credentials / "FABRIC_API__ADMIN_TOKEN"
    empty.write_text(" \n")
    unreadable = credentials / "FABRIC_TICKETS__WEBHOOK_TOKEN"
    unreadable.mkdir()  # a file that exists and cannot be read as one
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert caught.value.problems == [
        f"FABRIC_API__ADMIN_TOKEN: the credential {empty} is empty",
        f"FABRIC_TICKETS__WEBHOOK_TOKEN: cannot read the credential {unreadable}: is a directory, not a file"]


def test_config_check_refuses_a_credential_conflict_in_one_line_without_the_values(
        credentials: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (credentials / "FABRIC_TICKETS__JIRA__TOKEN").write_text("rotated-value")
    monkeypatch.setenv("FABRIC_JIRA_TOKEN", "stale-value")
    result = CliRunner().invoke(app, ["config", "check", str(EXAMPLE)])
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith("fabricctl: error: FABRIC_JIRA_TOKEN and the credential ")
    assert "rotated-value" not in line and "stale-value" not in line


def test_the_ufm_connection_reads_its_credential(credentials: Path) -> None:
    (credentials / "FABRIC_UFM__TOKEN").write_text("credential-token")
    assert UfmTarget("https://ufm.example.net", AuthMode.TOKEN).auth() == TokenAuth("credential-token")
