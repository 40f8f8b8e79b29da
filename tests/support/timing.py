"""The timing origin's capture plan, and the text a capture saw, for the browser tests."""

from __future__ import annotations

from pathlib import Path

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.testing.fixtures.timing.pages import WWW

IDLE = {"type": "wait_for_network_idle"}
FEED_PLAN = [{"type": "autoscroll", "max_steps": 60, "pause_ms": 250}]
"""The feed's steps, in capture and in replay: far more steps than the feed needs, so only reaching its
end stops the scroll."""

PLAN = {
    "pages": [
        {"url": f"{WWW}/wait", "actions": [IDLE]},
        {"url": f"{WWW}/beacon", "actions": [IDLE]},
        {"url": f"{WWW}/clocks", "actions": [IDLE]},
        {"url": f"{WWW}/feed", "actions": FEED_PLAN},
    ]
}
"""The timing origin's pages, captured once per session by the ``timing_snapshot`` fixture."""


def captured_text(snapshot: Path, url: str) -> str:
    """The text of ``url`` as the capture saw it (its fidelity text file)."""
    entry = next(p for p in checked_manifest(snapshot).pages if p.url == url)
    assert entry.text is not None
    return (snapshot / entry.text).read_text(encoding="utf-8")
