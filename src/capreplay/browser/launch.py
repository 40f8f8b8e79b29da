"""The one place that launches Chromium: flags, profile, determinism script, fixed environment.

Capture, replay, verify, the study, the agents and the judge all launch through :func:`open_browser`,
so they all see the same browser: same viewport, locale, timezone, frozen clock and seeded randomness.
"""

from __future__ import annotations

import asyncio
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

from playwright.async_api import BrowserContext, Error as PlaywrightError, Page, async_playwright

from capreplay.browser.determinism import determinism_script
from capreplay.errors import BrowserError

VIEWPORT = {"width": 1280, "height": 800}
LOCALE = "en-US"
TIMEZONE = "UTC"

# The error page's DNS probe sends real DNS queries when a navigation fails to resolve, whatever the
# resolver rules say; only this preference stops it.
_PREFERENCES = {"alternate_error_pages": {"enabled": False}, "net": {"network_prediction_options": 2}}

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


@asynccontextmanager
async def open_browser(settings: BrowserSettings) -> AsyncIterator[BrowserContext]:
    """A fresh Chromium (persistent context in a throw-away profile), closed however the block ends."""
    executable = find_chromium()
    if executable is None:
        raise BrowserError(
            "no Chromium found: run scripts/setup.sh, install Debian's 'chromium', or set CAPREPLAY_CHROMIUM"
        )
    with tempfile.TemporaryDirectory(prefix="capreplay-profile-") as profile:
        default = Path(profile, "Default")
        default.mkdir()
        (default / "Preferences").write_text(json.dumps(_PREFERENCES))
        args = list(settings.args)
        if settings.cdp_port is not None:
            args += [f"--remote-debugging-port={settings.cdp_port}", "--remote-debugging-address=127.0.0.1"]
        async with async_playwright() as pw:
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
                await context.add_init_script(determinism_script(settings.frozen_time, settings.random_seed))
                yield context
            finally:
                await context.close()
