"""The clock's rules one by one, on the live timing origin in a Chromium launched through capreplay.browser.

Each expectation is the documented rule (determinism.py): the first read tells the capture time, every
read advances 1 ms, a timer never fires before its due time, and what replaces a built-in looks like it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.async_api import Page

from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.testing.fixtures.timing.pages import WWW
from capreplay.testing.fixtures.timing.sites import TimingSites

pytestmark = pytest.mark.browser

START = datetime(2026, 11, 29, 13, 46, 43, tzinfo=UTC)
START_MS = 1_795_960_003_000


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    """A page of the live origin that reads no clock after load (the beacon page, its beacon sent)."""
    async with TimingSites() as sites, open_browser(BrowserSettings(sites.chromium_args(), START, 7)) as ctx:
        tab = ctx.pages[0]
        await tab.goto(f"{WWW}/beacon", wait_until="load")
        await tab.wait_for_function("document.getElementById('beacon').textContent.startsWith('https:')")
        yield tab


async def _eval(page: Page, script: str) -> Any:
    return await page.evaluate(script)


def test_the_capture_time_in_milliseconds_is_what_the_tests_assume() -> None:
    assert int(START.timestamp() * 1000) == START_MS


async def test_every_read_advances_one_step_whichever_clock_is_read(page: Page) -> None:
    reads = await _eval(page, """() => {
        const origin = performance.timeOrigin;
        return [Date.now(), new Date().valueOf(), origin + performance.now(),
                Temporal.Now.instant().epochMilliseconds, origin + performance.mark('m').startTime, Date.now()];
    }""")
    assert reads == list(range(reads[0], reads[0] + 6))
    assert reads[0] > START_MS  # the page read the clock while it loaded


async def test_a_timer_fires_no_earlier_than_its_due_time_on_the_page_clock(page: Page) -> None:
    waited = await _eval(page, """async () => {
        const t0 = Date.now();
        const realStart = performance.timeOrigin;  // not a read
        await new Promise((r) => setTimeout(r, 500));
        const timer = Date.now() - t0;
        let ticks = 0; const t1 = Date.now();
        await new Promise((r) => {
            const id = setInterval(() => { if (++ticks === 3) { clearInterval(id); r(); } }, 100);
        });
        return [timer, Date.now() - t1, realStart === performance.timeOrigin];
    }""")
    assert waited[0] == 500  # due at t0 + 500, which the next read tells
    assert waited[1] == 300  # three ticks of 100 ms
    assert waited[2]


async def test_a_debounce_that_checks_how_long_it_waited_goes_on_after_one_round(page: Page) -> None:
    rounds = await _eval(page, """() => new Promise((resolve) => {
        // lodash's debounce: on each timer, wait again for whatever is left of the delay.
        const wait = 1000, last = Date.now();
        let rounds = 0;
        const expired = () => {
            rounds++;
            const left = wait - (Date.now() - last);
            if (left > 0 && rounds < 50) { setTimeout(expired, left); } else { resolve(rounds); }
        };
        setTimeout(expired, wait);
    })""")
    assert rounds == 1


async def test_dates_strings_and_formats_tell_the_same_clock(page: Page) -> None:
    seen = await _eval(page, """() => {
        class Stamp extends Date {}
        const s = new Stamp();
        return {sub: s instanceof Stamp && s instanceof Date, subTime: s.getTime(), now: Date.now(),
                ctor: new Date().constructor === Date, length: Date.length, name: Date.name,
                parsed: new Date(0).toISOString(), utc: Date.UTC(2020, 0, 1),
                string: Date(), intl: new Intl.DateTimeFormat('en-US', {timeZone: 'UTC', dateStyle: 'short'}).format(),
                lastModified: document.lastModified};
    }""")
    assert seen["sub"] and seen["now"] == seen["subTime"] + 1
    assert seen["ctor"] and seen["length"] == 7 and seen["name"] == "Date"
    assert seen["parsed"] == "1970-01-01T00:00:00.000Z" and seen["utc"] == 1_577_836_800_000
    assert seen["string"].startswith("Sun Nov 29 2026 13:4")
    assert seen["intl"] == "11/29/26"
    # No Last-Modified header: the document tells the capture time, not the real now.
    assert seen["lastModified"] == "11/29/2026 13:46:43"


async def test_measures_marks_and_the_performance_json_agree_with_the_clock(page: Page) -> None:
    seen = await _eval(page, """() => {
        const a = performance.mark('a').startTime;
        const m = performance.measure('since-a', 'a');
        const whole = performance.measure('whole');
        const nav = performance.measure('nav', 'navigationStart', 'responseStart');
        const json = JSON.parse(JSON.stringify(performance));
        return {a, start: m.startTime, duration: m.duration, whole: whole.duration, wholeStart: whole.startTime,
                nav: nav.duration, origin: json.timeOrigin === performance.timeOrigin,
                timing: json.timing.responseStart - json.timing.navigationStart};
    }""")
    assert seen["start"] == seen["a"] and seen["duration"] == 1
    assert seen["wholeStart"] == 0 and seen["whole"] == seen["a"] + 2
    assert seen["nav"] == 10 == seen["timing"]
    assert seen["origin"]


async def test_events_and_frames_are_on_the_clock(page: Page) -> None:
    seen = await _eval(page, """() => new Promise((resolve) => {
        const before = performance.now();
        let stamp;
        document.body.addEventListener('click', (e) => { stamp = e.timeStamp; }, {once: true});
        document.body.click();
        const after = performance.now();
        requestAnimationFrame((f1) => requestAnimationFrame((f2) => {
            resolve({before, stamp, after, f1, f2, timeline: document.timeline.currentTime, now: performance.now()});
        }));
    })""")
    assert seen["before"] <= seen["stamp"] < seen["after"]
    assert seen["after"] < seen["f1"] and seen["f2"] - seen["f1"] >= 16
    assert seen["timeline"] == seen["f2"] < seen["now"]


async def test_replaced_built_ins_keep_their_shape(page: Page) -> None:
    seen = await _eval(page, """() => ({
        timeout: Object.getOwnPropertyDescriptor(window, 'setTimeout').enumerable,
        raf: Object.getOwnPropertyDescriptor(window, 'requestAnimationFrame').enumerable,
        stamp: Object.getOwnPropertyDescriptor(Event.prototype, 'timeStamp').enumerable,
        id: typeof setTimeout(() => {}, 0),
        string: (() => { try { setTimeout('window.__ran = 1', 0); return 'ok'; } catch (e) { return String(e); } })(),
    })""")
    assert seen == {"timeout": True, "raf": True, "stamp": True, "id": "number", "string": "ok"}
