"""The guard of tests/conftest.py: a test not marked ``browser`` cannot launch Chromium, a marked one can."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from capreplay.browser.launch import BrowserSettings, find_chromium, open_browser
from capreplay.errors import BrowserError
from tests.support.no_chromium import NO_CHROMIUM


async def test_a_test_not_marked_browser_finds_no_chromium_and_cannot_launch_one() -> None:
    assert os.environ["CAPREPLAY_CHROMIUM"] == NO_CHROMIUM
    assert find_chromium() is None
    with pytest.raises(BrowserError, match="no Chromium found"):
        async with open_browser(BrowserSettings([], datetime(2026, 1, 1, tzinfo=UTC), 1)):
            pass


def test_its_subprocesses_find_none_either() -> None:
    code = "from capreplay.browser.launch import find_chromium; print(find_chromium())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout == "None\n"


@pytest.mark.browser
def test_a_test_marked_browser_sees_the_chromium_it_would_otherwise() -> None:
    assert os.environ.get("CAPREPLAY_CHROMIUM") != NO_CHROMIUM
    chromium = find_chromium()
    assert chromium is not None and os.path.isfile(chromium)
