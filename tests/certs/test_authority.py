"""The snapshot's CA: made once per snapshot and kept in the user's cache folder, constrained to its hosts."""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.verification import PolicyBuilder, Store, VerificationError
from mitmproxy import certs

from capreplay.certs.authority import CERT, KEY_AND_CERT, snapshot_ca
from capreplay.util.cache_folder import cache_dir

SNAPSHOT = "ab" * 32
HOSTS = ["www.shop.test", "shop.test", "static.cdn.test"]


def _leaf_for(ca_folder: Path, name: str) -> x509.Certificate:
    """A leaf for ``name`` as mitmproxy makes it from this CA (its own certificate store, its own signer)."""
    store = certs.CertStore.from_store(ca_folder, "mitmproxy", 2048)
    return store.get_cert(name, [x509.DNSName(name)]).cert._cert


def _verifies(ca_cert: x509.Certificate, leaf: x509.Certificate, name: str) -> bool:
    builder = PolicyBuilder().store(Store([ca_cert])).time(datetime.now(UTC) + timedelta(days=2))
    try:
        builder.build_server_verifier(x509.DNSName(name)).verify(leaf, [])
    except VerificationError:
        return False
    return True


def test_the_ca_is_made_once_and_kept_in_the_cache_folder_not_the_snapshot() -> None:
    first = snapshot_ca(SNAPSHOT, HOSTS)
    assert first.folder == cache_dir() / "proxy-ca" / SNAPSHOT
    kept = (first.folder / KEY_AND_CERT).read_bytes()
    again = snapshot_ca(SNAPSHOT, reversed(HOSTS))
    assert again.made is None and again.pin == first.pin and (first.folder / KEY_AND_CERT).read_bytes() == kept
    assert first.cert == first.folder / CERT
    # The key is private to the user; the certificate alone is what clients are given.
    assert stat.S_IMODE((first.folder / KEY_AND_CERT).stat().st_mode) == 0o600
    assert b"PRIVATE KEY" not in first.cert.read_bytes()
    ca = x509.load_pem_x509_certificate(first.cert.read_bytes())
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_another_snapshot_gets_another_ca() -> None:
    assert snapshot_ca("cd" * 32, HOSTS).pin != snapshot_ca(SNAPSHOT, HOSTS).pin


@pytest.mark.parametrize(
    ("name", "trusted"),
    [("www.shop.test", True), ("static.cdn.test", True), ("shop.test", True),
     ("example.com", False), ("shop.test.example.com", False), ("www.bank.test", False)],
)  # fmt: skip
def test_the_ca_vouches_only_for_the_snapshot_hosts(name: str, trusted: bool) -> None:
    ca = snapshot_ca(SNAPSHOT, HOSTS)
    cert = x509.load_pem_x509_certificate(ca.cert.read_bytes())
    assert _verifies(cert, _leaf_for(ca.folder, name), name) is trusted


def test_a_ca_for_other_hosts_is_replaced_and_says_so() -> None:
    old = snapshot_ca("ef" * 32, ["old.test"])
    new = snapshot_ca("ef" * 32, ["old.test", "new.test"])
    assert new.pin != old.pin
    assert old.made == "new" and new.made is not None and "for other hosts" in new.made
    assert snapshot_ca("ef" * 32, ["new.test", "old.test"]).made is None
    loaded = serialization.load_pem_private_key((new.folder / KEY_AND_CERT).read_bytes(), None)
    assert x509.load_pem_x509_certificate(new.cert.read_bytes()).public_key() == loaded.public_key()


def test_an_unreadable_kept_ca_is_replaced() -> None:
    broken = snapshot_ca("12" * 32, HOSTS)
    (broken.folder / KEY_AND_CERT).write_bytes(b"not a pem")
    fixed = snapshot_ca("12" * 32, HOSTS)
    assert fixed.pin != broken.pin
    assert x509.load_pem_x509_certificate(fixed.cert.read_bytes()).public_key() is not None
