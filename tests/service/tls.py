"""A self-signed certificate for 127.0.0.1 made in the test: with the `cryptography` package when it is
installed, else with the `openssl` command; the test is skipped, saying why, when neither is there."""

from __future__ import annotations

import datetime
import importlib.util
import ipaddress
import shutil
import subprocess
from pathlib import Path

import pytest


def self_signed(folder: Path) -> tuple[Path, Path]:
    """(certificate, private key) PEM files for 127.0.0.1 (CN and IP subject alternative name)."""
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    if importlib.util.find_spec("cryptography") is not None:
        _with_cryptography(cert_path, key_path)
    elif shutil.which("openssl"):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(key_path), "-out", str(cert_path)], check=True, capture_output=True,
                       timeout=60)
    else:
        pytest.skip("a self-signed certificate needs the cryptography package or the openssl command; neither "
                    "is installed")
    return cert_path, key_path


def _with_cryptography(cert_path: Path, key_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False).sign(key, hashes.SHA256()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
