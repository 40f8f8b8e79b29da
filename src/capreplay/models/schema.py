"""Schema versions: each file capreplay writes (manifest, tasks file, registration) names the version it follows."""

from __future__ import annotations


def check_schema(value: int, supported: int) -> int:
    """``value`` if it is the ``supported`` version, else the ``ValueError`` pydantic reports for the field."""
    if value != supported:
        raise ValueError(f"schema_version {value} is not supported (this capreplay reads {supported})")
    return value
