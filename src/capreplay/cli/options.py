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


BACKENDS = ("local", "ray")


def add_backend_options(p: argparse.ArgumentParser, unit: str) -> None:
    """``--backend`` and ``--ray-address``: where each ``unit`` (an episode, a page session) runs."""
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help=f"where each {unit} runs: local (this machine) or ray (each {unit} a Ray task asking for one core and "
        "1 GiB; needs the ray extra) (default: local)",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="the Ray cluster to join, e.g. 10.0.0.5:6379, ray://head:10001, or auto (the one `ray start` last "
        "started here) (default: $RAY_ADDRESS, else a Ray started for the run on this machine, on 127.0.0.1)",
    )


def check_backend_options(args: argparse.Namespace) -> None:
    """``--ray-address`` without ``--backend ray`` is a ``UsageError``."""
    if args.backend != "ray" and args.ray_address is not None:
        raise UsageError("--ray-address needs --backend ray")
