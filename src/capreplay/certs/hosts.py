"""Certificates for the local servers: one key, a leaf per hostname, and the SPKI pin Chromium trusts.

Chromium accepts a certificate whose public key is listed in ``--ignore-certificate-errors-spki-list``,
so every leaf is signed with one local key and that key's SPKI is the only thing the browser is told.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import ssl
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes
from cryptography.x509.oid import NameOID


def new_key() -> ec.EllipticCurvePrivateKey:
    """A fresh P-256 key: fast to make and to sign with, accepted by every TLS client."""
    return ec.generate_private_key(ec.SECP256R1())


def spki_pin(public_key: PublicKeyTypes) -> str:
    """Base64 of the sha256 of the DER SubjectPublicKeyInfo, as Chromium's SPKI list wants it."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(der).digest()).decode("ascii")


def spki_pin_of_pem(cert_pem: bytes) -> str:
    """The SPKI pin of a PEM certificate (for example mitmproxy's CA)."""
    return spki_pin(x509.load_pem_x509_certificate(cert_pem).public_key())


def leaf_certificate(key: ec.EllipticCurvePrivateKey, names: list[str]) -> bytes:
    """A self-signed PEM certificate for ``names`` (hostnames or IP literals), signed with ``key``."""
    alt: list[x509.GeneralName] = []
    for name in names:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alt.append(x509.DNSName(name))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0][:64])])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    """The private key as unencrypted PKCS#8 PEM."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def server_context(cert_pem: bytes, private_pem: bytes) -> ssl.SSLContext:
    """A server-side SSLContext for one certificate (the ssl module only loads chains from files)."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.set_alpn_protocols(["http/1.1"])
    with tempfile.TemporaryDirectory() as tmp:
        cert_file, key_file = Path(tmp, "cert.pem"), Path(tmp, "key.pem")
        cert_file.write_bytes(cert_pem)
        key_file.write_bytes(private_pem)
        ctx.load_cert_chain(cert_file, key_file)
    return ctx


class HostCertificates:
    """Serves a certificate per SNI hostname, all from one key, made on first use and cached."""

    def __init__(self, default_names: list[str]) -> None:
        self.key = new_key()
        self._key_pem = key_pem(self.key)
        self._contexts: dict[str, ssl.SSLContext] = {}
        self.default = server_context(leaf_certificate(self.key, default_names or ["localhost"]), self._key_pem)
        self.default.sni_callback = self._pick

    @property
    def pin(self) -> str:
        """The SPKI pin of the one key every certificate uses."""
        return spki_pin(self.key.public_key())

    def context_for(self, host: str) -> ssl.SSLContext:
        """The SSLContext holding a certificate for ``host``."""
        host = host.lower().rstrip(".")
        ctx = self._contexts.get(host)
        if ctx is None:
            ctx = server_context(leaf_certificate(self.key, [host]), self._key_pem)
            self._contexts[host] = ctx
        return ctx

    def _pick(self, sock: ssl.SSLObject | ssl.SSLSocket, server_name: str | None, _: ssl.SSLContext) -> None:
        if server_name:
            sock.context = self.context_for(server_name)
