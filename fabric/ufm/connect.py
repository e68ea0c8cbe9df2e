"""How the command line reaches a UFM: URL, auth mode and secrets (from the environment or files only)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from fabric.envsecrets import UFM_PASSWORD, UFM_TOKEN, EnvSecret, EnvSecretError, read_secret_file
from fabric.errors import ErrorKind, FabricError
from fabric.ufm.address import DEFAULT_TIMEOUT_S, check_base_url, check_timeout
from fabric.ufm.auth import BasicAuth, SessionAuth, TokenAuth, UfmAuth
from fabric.ufm.client import UfmClient
from topology.errors import InputError
from topology.redact import redacted_url


class AuthMode(StrEnum):
    BASIC = "basic"
    TOKEN = "token"
    SESSION = "session"


class ConnectError(FabricError, ValueError):
    """How to reach UFM is unusable as given (URL, timeout, secret): the message names the option or file."""

    kind = ErrorKind.CONFIG


def _secret(env: EnvSecret, file: Path | None, what: str) -> str:
    if file is not None:
        try:
            return read_secret_file(file)
        except InputError as exc:
            raise ConnectError(f"cannot read the {what} file {file}: {exc.message}") from None
    try:
        value = env.read()
    except EnvSecretError as exc:
        raise ConnectError(str(exc)) from None
    if not value:
        raise ConnectError(f"no UFM {what}: set {env.name} or pass a file")
    return value


@dataclass(frozen=True, slots=True)
class UfmTarget:
    url: str
    mode: AuthMode = AuthMode.BASIC
    user: str = "admin"
    secret_file: Path | None = None
    ca_bundle: Path | None = None
    insecure: bool = False
    timeout: float = DEFAULT_TIMEOUT_S
    """Seconds each request may take to connect, send and read (reads are retried after a timeout)."""

    def auth(self) -> UfmAuth:
        if self.mode is AuthMode.TOKEN:
            return TokenAuth(_secret(UFM_TOKEN, self.secret_file, "access token"))
        password = _secret(UFM_PASSWORD, self.secret_file, "password")
        return SessionAuth(self.user, password) if self.mode is AuthMode.SESSION else BasicAuth(self.user, password)

    def client(self) -> UfmClient:
        """A client for this UFM; ConnectError (one line) for a URL, timeout, secret or CA bundle it cannot use."""
        try:
            check_base_url(self.url)
        except ValueError as exc:
            raise ConnectError(f"UFM base URL {redacted_url(self.url)!r}: {exc}") from None
        try:
            check_timeout(self.timeout)
        except ValueError as exc:
            raise ConnectError(str(exc)) from None
        auth = self.auth()
        try:
            return UfmClient(self.url, auth, verify=not self.insecure, ca_bundle=self.ca_bundle, timeout=self.timeout)
        except InputError as exc:  # the CA bundle is read here
            raise ConnectError(f"cannot use the CA bundle {self.ca_bundle}: {exc.message}") from None
        except ValueError as exc:  # a URL httpx refuses beyond the check
            raise ConnectError(str(exc)) from None
        except OSError as exc:  # ssl.SSLError: what it holds is no certificate
            raise ConnectError(f"cannot use the CA bundle {self.ca_bundle}: {exc.strerror or exc}") from None
