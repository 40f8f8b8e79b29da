"""The one place that launches Chromium: flags, profile, determinism script, fixed environment.

Capture, replay, verify, the study, the agents and the judge all launch through :func:`open_browser`,
so they all see the same browser: same viewport, locale, timezone, frozen clock and seeded randomness.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from playwright.async_api import (
    BrowserContext,
    CDPSession,
    Error as PlaywrightError,
    Page,
    Playwright,
    async_playwright,
)

from capreplay.browser.determinism import determinism_script
from capreplay.errors import BrowserError

VIEWPORT = {"width": 1280, "height": 800}
LOCALE = "en-US"
TIMEZONE = "UTC"

# The error page's DNS probe sends real DNS queries when a navigation fails to resolve, whatever the
# resolver rules say. The rules refuse unknown hosts rather than leave them unresolved, so no probe starts
# (see flags.REFUSED); the preference stays as a second guard for capreplay's own browsers.
PREFERENCES = {"alternate_error_pages": {"enabled": False}, "net": {"network_prediction_options": 2}}

# Settled rendering: a screenshot must not depend on how far an animated image or an image decode had got
# when it was taken. Animated GIF, WebP and APNG images show their first frame (Chromium's animation
# policy); images are decoded in the frame that first shows them rather than later (no checker-imaging);
# and a tile is always rastered whole: a partial re-raster of the invalidated part of a tile anti-aliases the
# edges of rounded boxes one colour step differently, so the same page gave other pixels on some loads.
# CSS animations and transitions run ANIMATION_RATE times faster than real time (CDP's document-timeline
# playback rate, which survives navigations): a 300 ms fade has ended long before a screenshot, instead of
# being caught at whatever point the machine's speed let it reach. Events such as transitionend still fire.
# Not --run-all-compositor-stages-before-draw: without begin-frame control it can leave a screenshot
# waiting for a frame that never comes (the study's screenshot timed out once in three suite runs with it).
_SETTLED_PREFERENCES = {"settings": {"a11y": {"animation_policy": "none"}}}
SETTLED_ARGS: tuple[str, ...] = (
    "--disable-checker-imaging",
    "--disable-partial-raster",
)
ANIMATION_RATE = 1000.0
# An endless CSS animation (a spinner, a ticker) has no end to run to: each one is held at its first frame
# as soon as it starts, so its phase in a screenshot does not depend on when the screenshot was taken.
_HOLD_ENDLESS_ANIMATIONS = """(() => {
  const hold = (event) => {
    const target = event.target;
    if (!target || typeof target.getAnimations !== 'function') { return; }
    for (const animation of target.getAnimations()) {
      if (animation.animationName === event.animationName
          && animation.effect && animation.effect.getTiming().iterations === Infinity) {
        animation.pause();
        animation.currentTime = 0;
      }
    }
  };
  addEventListener('animationstart', hold, true);
})();"""

_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")


def find_chromium() -> str | None:
    """The Chromium to use: ``$CAPREPLAY_CHROMIUM``, Playwright's own, then the system's (or None)."""
    explicit = os.environ.get("CAPREPLAY_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    bundled = _playwright_chromium()
    if bundled:
        return bundled
    for path in _CANDIDATES:
        if Path(path).is_file():
            return path
    return shutil.which("chromium")


def _playwright_chromium() -> str | None:
    """Playwright's downloaded Chromium, when one was installed."""
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache" / "ms-playwright"))
    for path in sorted(root.glob("chromium-*/chrome-linux*/chrome"), reverse=True):
        if path.is_file():
            return str(path)
    return None


def chromium_version(executable: str) -> str:
    """The version string the binary reports (``Chromium 131.0...``)."""
    out = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return out.stdout.strip() or "unknown"


@dataclass
class BrowserSettings:
    """How to launch: extra flags and the determinism parameters of the snapshot."""

    args: list[str]
    frozen_time: datetime
    random_seed: int
    headless: bool = True
    viewport: dict[str, int] = field(default_factory=lambda: dict(VIEWPORT))
    record_har: Path | None = None
    """Write every exchange the browser sees, bodies included, to this HAR file when it closes."""
    cdp_port: int | None = None
    """Also serve CDP on 127.0.0.1 at this port (0: a free one), so that a subprocess such as an agent adapter
    can attach to this browser; :func:`cdp_url` gives the endpoint. None: Playwright's pipe only."""
    settle_rendering: bool = True
    """Settled rendering (animated images on their first frame, images decoded before they are drawn,
    animations and transitions ended almost at once); only a benchmark of what it changes turns it off."""


# The CDP endpoint of each browser launched with ``cdp_port``; weak so a closed context is forgotten.
_CDP_URLS: weakref.WeakKeyDictionary[BrowserContext, str] = weakref.WeakKeyDictionary()


def cdp_url(context: BrowserContext) -> str:
    """The ``http://127.0.0.1:PORT`` CDP endpoint of a browser opened with ``BrowserSettings.cdp_port``."""
    try:
        return _CDP_URLS[context]
    except KeyError:
        raise BrowserError("this browser was launched without a CDP port (set BrowserSettings.cdp_port)") from None


async def page_target_id(page: Page) -> str:
    """The CDP target id of a page (its tab), as other CDP clients of the same browser name it."""
    session = await page.context.new_cdp_session(page)
    try:
        info = await session.send("Target.getTargetInfo")
    finally:
        await session.detach()
    return str(info["targetInfo"]["targetId"])


async def _devtools_port(profile: Path, timeout: float = 10.0) -> int:
    """The port Chromium chose, from the ``DevToolsActivePort`` file it writes into the profile at start-up."""
    path = profile / "DevToolsActivePort"
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        lines = path.read_text().splitlines() if path.is_file() else []
        if lines and lines[0].isdigit():
            return int(lines[0])
        if asyncio.get_running_loop().time() > deadline:
            raise BrowserError("Chromium did not report its CDP port", path)
        await asyncio.sleep(0.05)


def require_chromium() -> str:
    """:func:`find_chromium`'s Chromium, or a ``BrowserError`` saying how to get one."""
    executable = find_chromium()
    if executable is None:
        raise BrowserError(
            "no Chromium found: run scripts/setup.sh, install Debian's 'chromium', or set CAPREPLAY_CHROMIUM"
        )
    return executable


@dataclass(frozen=True)
class LaunchParts:
    """What every capreplay browser is launched with, for a browser capreplay does not launch itself."""

    args: list[str]
    preferences: dict[str, object]
    init_scripts: list[str]
    """Run in every document before its own scripts, in this order."""


def launch_parts(settings: BrowserSettings) -> LaunchParts:
    """The flags, profile preferences and init scripts of ``settings`` (CDP left out)."""
    settled = settings.settle_rendering
    return LaunchParts(
        args=[*settings.args, *(SETTLED_ARGS if settled else ())],
        preferences={**PREFERENCES, **(_SETTLED_PREFERENCES if settled else {})},
        init_scripts=[determinism_script(settings.frozen_time, settings.random_seed),
                      *([_HOLD_ENDLESS_ANIMATIONS] if settled else [])],
    )  # fmt: skip


@asynccontextmanager
async def open_browser(settings: BrowserSettings, *, driver: Playwright | None = None) -> AsyncIterator[BrowserContext]:
    """A fresh Chromium (persistent context in a throw-away profile), closed however the block ends.

    ``driver``: a running Playwright to launch it with (a harness that launches one browser after another saves
    starting a driver each time; the browser is as fresh either way); without it, one is started and stopped."""
    executable = require_chromium()
    with tempfile.TemporaryDirectory(prefix="capreplay-profile-") as profile:
        default = Path(profile, "Default")
        default.mkdir()
        parts = launch_parts(settings)
        (default / "Preferences").write_text(json.dumps(parts.preferences))
        args = list(parts.args)
        if settings.cdp_port is not None:
            args += [f"--remote-debugging-port={settings.cdp_port}", "--remote-debugging-address=127.0.0.1"]
        async with contextlib.AsyncExitStack() as stack:
            pw = driver if driver is not None else await stack.enter_async_context(async_playwright())
            try:
                context = await pw.chromium.launch_persistent_context(
                    profile,
                    executable_path=executable,
                    headless=settings.headless,
                    args=args,
                    viewport=settings.viewport,  # type: ignore[arg-type]
                    device_scale_factor=1,
                    locale=LOCALE,
                    timezone_id=TIMEZONE,
                    service_workers="block",
                    reduced_motion="reduce",
                    record_har_path=settings.record_har,
                    record_har_content="embed",
                )
            except PlaywrightError as e:
                raise BrowserError(f"Chromium failed to launch: {e.message.splitlines()[0]}", executable) from e
            try:
                if settings.cdp_port is not None:
                    _CDP_URLS[context] = f"http://127.0.0.1:{await _devtools_port(Path(profile))}"
                for script in parts.init_scripts:
                    await context.add_init_script(script)
                if settings.settle_rendering:
                    await _settle_animations(context)
                yield context
            finally:
                await context.close()


async def _settle_animations(context: BrowserContext) -> None:
    """Every page of ``context``, present and future, plays its animations at ``ANIMATION_RATE``."""
    sessions: list[CDPSession] = []  # held for the context's life: a detached session's rate is forgotten

    async def settle(page: Page) -> None:
        try:
            session = await context.new_cdp_session(page)
            await session.send("Animation.setPlaybackRate", {"playbackRate": ANIMATION_RATE})
        except PlaywrightError:
            return  # the page closed before it could be reached; nothing of it will be looked at
        sessions.append(session)

    for page in context.pages:
        await settle(page)
    context.on("page", settle)

