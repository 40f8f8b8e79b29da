"""The snapshot's own certificate authority: made once per snapshot id, kept in the user's cache folder.

A user trusts the CA once (Firefox, a system store, ``curl --cacert``) and every later ``serve --proxy-port``
of the same snapshot signs with it. It lives under ``$CAPREPLAY_CACHE_DIR/proxy-ca/<snapshot id>/``, never
in the snapshot folder, whose files are exactly those its manifest lists. The folder is mitmproxy's
configuration folder: ``mitmproxy-ca.pem`` holds key and certificate (mode 0600), ``mitmproxy-ca-cert.pem``
the certificate alone, the file to trust.

A trusted CA whose key sits on disk could vouch for any site, so this one is name-constrained to the
snapshot's hosts: clients that check name constraints (Chromium, Firefox, OpenSSL) accept it for those
hosts only. mitmproxy signs each leaf with the CA's own key, so the CA's SPKI pin is also every leaf's,
and Chromium trusts both through ``--ignore-certificate-errors-spki-list``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from capreplay.certs.hosts import key_pem, new_key, spki_pin
from capreplay.errors import OutputError, os_reason
from capreplay.util.cache_folder import cache_dir

KEY_AND_CERT = "mitmproxy-ca.pem"
"""Key and certificate, where mitmproxy looks for its CA in its configuration folder."""
CERT = "mitmproxy-ca-cert.pem"
"""The certificate alone: the file a user trusts."""
VALID_DAYS = 3650
_ANY_IP = [ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")]


@dataclass(frozen=True)
class SnapshotCA:
    """A snapshot's CA on disk: mitmproxy's configuration folder, the certificate to trust, its SPKI pin."""

    folder: Path
    cert: Path
    pin: str
    made: str | None = None
    """None when the kept CA was used; else why one was made (a client trusting the old one must trust this)."""


def ca_folder(snapshot_id: str) -> Path:
    """Where the CA of snapshot ``snapshot_id`` is kept."""
    return cache_dir() / "proxy-ca" / snapshot_id


def name_constraints(hosts: Iterable[str]) -> x509.NameConstraints:
    """Constraints that permit exactly ``hosts`` (and their subdomains) and no IP address but listed ones."""
    names: list[x509.GeneralName] = []
    networks: list[x509.GeneralName] = []
    for host in sorted(set(hosts)):
        try:
            networks.append(x509.IPAddress(ipaddress.ip_network(host)))
            continue
        except ValueError:
            pass
        with contextlib.suppress(UnicodeError):  # a name no certificate can carry is simply not permitted
            names.append(x509.DNSName(host.encode("idna").decode("ascii")))
    # Constraints bind only the name types they mention: without any IP subtree a leaf for any IP would pass.
    excluded = None if networks else [x509.IPAddress(net) for net in _ANY_IP]
    return x509.NameConstraints(permitted_subtrees=[*names, *networks] or None, excluded_subtrees=excluded)


def make_ca(
    snapshot_id: str, hosts: Iterable[str], now: datetime
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A fresh CA key and self-signed certificate for snapshot ``snapshot_id``, constrained to ``hosts``."""
    key = new_key()
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, f"capreplay snapshot {snapshot_id[:16]}"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "capreplay"),
        ]
    )
    usage = x509.KeyUsage(
        digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False,
        key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False,
    )  # fmt: skip
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(name_constraints(hosts), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def covers(cert: x509.Certificate, hosts: Iterable[str], now: datetime) -> bool:
    """Whether ``cert`` is valid now (and for a day more) and its name constraints are those of ``hosts``."""
    try:
        constraints = cert.extensions.get_extension_for_class(x509.NameConstraints).value
    except x509.ExtensionNotFound:
        return False
    return cert.not_valid_after_utc > now + timedelta(days=1) and constraints == name_constraints(hosts)


def snapshot_ca(snapshot_id: str, hosts: Iterable[str], *, now: datetime | None = None) -> SnapshotCA:
    """The CA of snapshot ``snapshot_id``: the kept one, else a new one made and kept.

    A kept CA that cannot be read, has expired, or is constrained to other hosts (a newer capreplay maps
    more of a snapshot's names) is replaced; ``made`` says so, since the user must trust the new one.
    """
    hosts = sorted(set(hosts))
    now = now or datetime.now(UTC)
    folder = ca_folder(snapshot_id)
    combined = folder / KEY_AND_CERT
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        cert = _load(combined)
        made = None
        if cert is None or not covers(cert, hosts, now):
            made = "new" if not combined.exists() else "the kept one was unreadable, expired or for other hosts"
            key, cert = make_ca(snapshot_id, hosts, now)
            # Two servers of one snapshot starting at once must end up with one CA: the first to link wins.
            pem = key_pem(key) + cert.public_bytes(serialization.Encoding.PEM)
            cert = _keep(combined, pem, replace=combined.exists())
        pem = cert.public_bytes(serialization.Encoding.PEM)
        cert_file = folder / CERT
        if not cert_file.exists() or cert_file.read_bytes() != pem:
            _keep(cert_file, pem, replace=True)
    except OSError as e:
        raise OutputError(f"cannot keep the snapshot's CA: {os_reason(e)}", folder) from e
    return SnapshotCA(folder=folder, cert=cert_file, pin=spki_pin(cert.public_key()), made=made)


def _load(path: Path) -> x509.Certificate | None:
    """The certificate of a kept key-and-certificate file whose key matches it, else None."""
    try:
        raw = path.read_bytes()
        key = serialization.load_pem_private_key(raw, None)
        cert = x509.load_pem_x509_certificate(raw)
    except (OSError, ValueError, TypeError):
        return None
    return cert if cert.public_key() == key.public_key() else None


def _keep(path: Path, data: bytes, *, replace: bool) -> x509.Certificate:
    """Write ``data`` to ``path`` through a private temporary file (mode 0600); without ``replace``, a file
    another process put there first wins. Returns the certificate now at ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if path.name == CERT:
            os.chmod(tmp, 0o644)  # the certificate alone is public: users hand it to their clients
        if replace:
            os.replace(tmp, path)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return x509.load_pem_x509_certificate(path.read_bytes())
