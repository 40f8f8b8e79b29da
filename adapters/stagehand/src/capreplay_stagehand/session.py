"""The page session: one Stagehand-launched Chromium with one page on it, opened by ``open``.

Stagehand's Runtime extension has to be in the browser when a document is created: attached to a browser that
someone else launched and loaded, its locators fail ("Stagehand extension world not ready") and cross-site
frames are missing from its snapshot. So Stagehand launches its own Chromium, with capreplay's binary and
flags (:mod:`capreplay_stagehand.offline`), and every ``open`` starts a fresh one: no state is carried from
one page to the next. The profile is the adapter's, so capreplay's preferences can be written into it first.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from capreplay_jsonlines.protocol import RequestError
from stagehand import Stagehand, StagehandBrowser, local_browser
from stagehand.page import Page

from capreplay_stagehand.offline import free_port, launch_args

log = logging.getLogger(__name__)

StagehandLevel = Literal["off", "error", "warn", "info", "debug"]
_LEVELS: dict[str, StagehandLevel] = {"DEBUG": "debug", "INFO": "info", "WARNING": "warn", "ERROR": "error"}


@dataclass
class Session:
    """A launched browser, Stagehand attached to it, its page, and the last snapshot's XPath map."""

    browser: StagehandBrowser
    stagehand: Stagehand
    page: Page
    cdp_port: int
    args: list[str]
    profile: Path
    xpath_map: dict[str, str] | None = field(default=None)

    async def close(self) -> None:
        """Detach Stagehand, end the browser, remove the profile; each step even if one before it failed."""
        try:
            await self.stagehand.close()
        finally:
            try:
                await self.browser.close()
            finally:
                await asyncio.to_thread(shutil.rmtree, self.profile, True)


@dataclass
class _State:
    session: Session | None = None


_STATE = _State()


def current() -> Session:
    """The open session, or a RequestError: a page command needs ``open`` first."""
    if _STATE.session is None:
        raise RequestError("no page is open: send 'open' first")
    return _STATE.session


async def close_current() -> None:
    """Close the open session, if any."""
    session, _STATE.session = _STATE.session, None
    if session is not None:
        await session.close()


def stagehand_log_level() -> StagehandLevel:
    """Stagehand's own log level, from the adapter's (``$CAPREPLAY_ADAPTER_LOG_LEVEL``, default WARNING)."""
    return _LEVELS.get(os.environ.get("CAPREPLAY_ADAPTER_LOG_LEVEL", "WARNING").upper(), "warn")


def _profile(preferences: dict[str, object] | None) -> Path:
    """A fresh profile folder, with ``Default/Preferences`` written when capreplay gives preferences."""
    profile = Path(tempfile.mkdtemp(prefix="profile-"))
    if preferences is not None:
        (profile / "Default").mkdir()
        (profile / "Default" / "Preferences").write_text(json.dumps(preferences))
    return profile


async def launch(executable: str, args: list[str], width: int, height: int,
                 preferences: dict[str, object] | None) -> Session:  # fmt: skip
    """A new session: Stagehand's Chromium, headless, on capreplay's flags, with Stagehand attached."""
    port = free_port()
    flags = launch_args(args, port)
    profile = _profile(preferences)
    try:
        browser = await local_browser.launch(
            executable_path=executable, headless=True, args=flags, port=port, user_data_dir=profile,
            viewport_width=width, viewport_height=height,
        )  # fmt: skip
    except BaseException:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    try:
        stagehand = await Stagehand.create(browser=browser, logging={"level": stagehand_log_level()})
        page = await browser.context.active_page()
        if page is None:
            raise RequestError("Stagehand's browser has no page")
    except BaseException:
        try:
            await browser.close()
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        raise
    return Session(browser, stagehand, page, port, flags, profile)


async def install(session: Session) -> None:
    """Make ``session`` the open one, closing the one before."""
    await close_current()
    _STATE.session = session
