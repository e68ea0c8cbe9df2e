"""A fresh self-signed certificate for ``fabricctl simulate --tls``, made with the ``openssl`` command line."""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
from pathlib import Path


class TlsError(RuntimeError):
    """No certificate could be made (``openssl`` missing or failing)."""


def self_signed_certificate(directory: Path, host: str = "127.0.0.1", days: int = 30) -> tuple[Path, Path]:
    """Write ``cert.pem`` and ``key.pem`` (P-256, valid ``days``) into ``directory``; return their paths.

    The certificate names ``localhost``, ``127.0.0.1`` and ``host``, so clients that verify it against
    the file (``UfmClient(ca_bundle=cert)``) accept it.
    """
    openssl = shutil.which("openssl")
    if openssl is None:
        raise TlsError("--tls needs the openssl command line to make a self-signed certificate")
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    names = ["DNS:localhost", "IP:127.0.0.1"]
    try:
        ipaddress.ip_address(host)
        extra = f"IP:{host}"
    except ValueError:
        extra = f"DNS:{host}"
    if extra not in names:
        names.append(extra)
    command = [
        openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", str(key), "-out", str(cert), "-days", str(days), "-subj", "/CN=fabric-remediation UFM simulator",
        "-addext", "subjectAltName=" + ",".join(names),
    ]
    try:
        subprocess.run(command, check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        raise TlsError(f"openssl could not make a certificate: {exc} {detail.decode(errors='replace')}") from exc
    key.chmod(0o600)
    return cert, key
