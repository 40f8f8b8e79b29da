"""Option types the verbs share: each turns a bad value into argparse's one-line error, exit status 2."""

from __future__ import annotations

import argparse
from urllib.parse import urlsplit

from capreplay.errors import UsageError
from capreplay.util.once import given_once


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def id_list(text: str) -> list[str]:
    """Comma-separated ids (``a,b``), at least one, none twice."""
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise argparse.ArgumentTypeError("name at least one id")
    try:
        return given_once(ids, "id")
    except UsageError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def http_url(text: str) -> str:
    """An absolute http(s) URL with a host, as a snapshot's pages are (a bare ``shop.test`` is refused)."""
    try:
        parts = urlsplit(text)
        ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a malformed port or IPv6 address
        ok = False
    if not ok:
        raise argparse.ArgumentTypeError(f"not an http(s) URL with a host: {text!r}")
    return text
