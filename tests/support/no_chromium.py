"""What a test not marked ``browser`` is told about Chromium (see the guard in tests/conftest.py): nothing."""

from __future__ import annotations

from pathlib import Path

NO_CHROMIUM = "/nonexistent/capreplay-test-not-marked-browser/chromium"
"""``CAPREPLAY_CHROMIUM`` of a test not marked ``browser``: a path that does not exist."""
BLOCKED_ENV = {"CAPREPLAY_CHROMIUM": NO_CHROMIUM, "PLAYWRIGHT_BROWSERS_PATH": str(Path(NO_CHROMIUM).parent)}
"""The environment of a test not marked ``browser``: neither capreplay nor Playwright finds a Chromium."""
