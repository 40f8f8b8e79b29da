"""The last ``verify`` report of each snapshot, kept in the user's cache folder so the viewer can show it.

It is kept by snapshot id, outside the snapshot folder (whose every file is in its manifest), and replaced
by each ``verify`` run, whole; a report that cannot be read is as good as none.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from capreplay.util.cache_folder import cache_dir
from capreplay.util.files import write_atomic


def last_report_path(snapshot_id: str) -> Path:
    """Where the last report of snapshot ``snapshot_id`` is kept."""
    return cache_dir() / "verify" / f"{snapshot_id}.json"


def save_last_report(snapshot_id: str, report: dict[str, Any]) -> None:
    """Keep ``report`` (verify's ``--json`` object) with the time it was made."""
    path = last_report_path(snapshot_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = {"snapshot_id": snapshot_id, "verified_at": datetime.now(UTC).isoformat(timespec="seconds"), **report}
    write_atomic(path, json.dumps(kept).encode("utf-8"))


def load_last_report(snapshot_id: str) -> dict[str, Any] | None:
    """The last report kept for ``snapshot_id``, or None."""
    try:
        data = json.loads(last_report_path(snapshot_id).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("snapshot_id") == snapshot_id else None
