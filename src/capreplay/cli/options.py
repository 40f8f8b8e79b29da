"""Option types the verbs share: each turns a bad value into argparse's one-line error, exit status 2."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from capreplay.errors import UsageError
from capreplay.llm.access import Role, base_url_variable, key_help, model_base_url, model_key
from capreplay.util.once import given_once

if TYPE_CHECKING:
    from capreplay.llm.messages import ModelSettings


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


def add_base_url_option(p: argparse.ArgumentParser, role: Role, whose: str) -> None:
    """``--base-url`` for a verb that calls ``whose`` model in ``role`` (see :mod:`capreplay.llm.access`)."""
    p.add_argument("--base-url", type=http_url, metavar="URL",
                   help=f"{whose} model API's endpoint root (default: ${base_url_variable(role)}, else the model "
                   f"settings', else the provider's own; the key: {key_help(role)})")  # fmt: skip


def model_access(args: argparse.Namespace, role: Role, settings: ModelSettings) -> tuple[ModelSettings, str | None]:
    """``settings`` with the endpoint the command line or the environment gives ``role``, and ``role``'s key (None:
    none set). The one place a verb reads a model's key and endpoint."""
    base_url = model_base_url(role, getattr(args, "base_url", None), settings.base_url, os.environ)
    if base_url != settings.base_url:
        settings = settings.model_copy(update={"base_url": base_url})
    return settings, model_key(role, settings.provider, os.environ)
