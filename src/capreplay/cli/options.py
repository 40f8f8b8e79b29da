"""Option types the verbs share: each turns a bad value into argparse's one-line error, exit status 2."""

from __future__ import annotations

import argparse
from collections import Counter


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
    twice = [value for value, n in Counter(ids).items() if n > 1]
    if twice:
        raise argparse.ArgumentTypeError(f"{twice[0]!r} is listed twice")
    return ids
