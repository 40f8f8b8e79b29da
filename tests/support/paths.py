"""Paths of the repository the tests read."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
"""The repository's root folder."""
