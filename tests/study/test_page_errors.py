"""A study page that cannot be loaded offline is one clear error naming it, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from capreplay.errors import BrowserError
from capreplay.study.page.load import open_page_session, replay_browser

pytestmark = pytest.mark.browser


async def test_a_page_outside_the_snapshot_is_a_browser_error_naming_it(committed_snapshot: Path) -> None:
    async with replay_browser(committed_snapshot) as context:
        with pytest.raises(BrowserError) as raised:
            await open_page_session(context, "https://not-in-the-snapshot.test/")
        assert raised.value.where == "https://not-in-the-snapshot.test/"
        assert "ERR_CONNECTION_REFUSED" in raised.value.message
        assert len(context.pages) <= 1  # the failed tab was closed
