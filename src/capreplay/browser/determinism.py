"""The script injected before any page script, in capture and in replay alike (``determinism.js``).

It gives every document a deterministic clock and seeds ``Math.random``, ``crypto.getRandomValues`` and
``crypto.randomUUID``, so that a page captured once replays to the same DOM and the same pixels, and a
URL a script builds from the time (``?_=<Date.now()>``, a timing beacon) is the URL that was archived.
The idea is Web Page Replay's ``deterministic.js``; the rules and the code are ours.

The clock: one counter per document, in whole milliseconds, that every clock the page can read shares.

- It starts at the capture time: the first read returns exactly ``frozen_time``, so a page that reads
  the time once asks for the same URL as under a frozen clock.
- Every read advances it by :data:`READ_STEP_MS` (1 ms). Reads are ``Date()``, ``new Date()``,
  ``Date.now()``, ``performance.now()``, ``performance.mark``, a ``performance.measure`` without an end,
  ``Intl.DateTimeFormat.format()`` of no date and ``Temporal.Now``. Web Page Replay advances 50 ms every
  25 reads; we advance on every read instead, so two reads never tell the same time (a loop that waits
  by polling always progresses, an elapsed time is never zero), and one whole millisecond keeps every
  clock an integer, so ``performance.now()`` and the integer fields of ``performance.timing`` agree
  exactly and a page that waits N ms by polling goes on after N reads.
- A timer callback (``setTimeout``, ``setInterval``) starts no earlier than its due time on this clock,
  as in a real browser, so a debounce that checks how long it waited goes on after one round instead of
  after ``delay / step`` rounds. An animation frame is a read, at least :data:`FRAME_MS` after the
  previous frame; every callback of one frame gets its timestamp, which is also
  ``document.timeline.currentTime`` while the frame runs.
- ``performance.timeOrigin`` and ``performance.timing.navigationStart`` are :data:`NAVIGATION_MS` before
  the capture time: the navigation's fetch phases lie at the fixed offsets of :data:`NAVIGATION`, one
  millisecond apart (redirect fields only when there was a redirect, ``secureConnectionStart`` only over
  https), ``unloadEventStart``/``End`` are always 0 (otherwise a page's times would depend on the page
  visited before it), and ``domLoading`` is the capture time. Each later phase (``domInteractive`` to
  ``loadEventEnd``) is stamped, in order, with the last time the clock returned when it happens.
- Anything else the page did not make itself (``event.timeStamp``, resource, paint and event-timing
  entries, ``IntersectionObserverEntry.time``) is stamped, when the page first reads it, with the last
  time the clock returned: never after a later read, never before an earlier one. Such entries have
  zero duration; the navigation entry follows ``performance.timing``; marks and measures keep the times
  the page gave them.
- ``document.lastModified`` of a document without an older ``Last-Modified`` tells the capture time.

So every duration a page computes is non-negative, and two loads that make the same reads in the same
order see the same times, whatever the real time. Workers have no init script and keep the real clock.
"""

from __future__ import annotations

import json
from datetime import datetime
from importlib.resources import files

DEFAULT_SEED = 20_240_601
"""The seed of ``Math.random`` and ``crypto`` when a capture names none."""

READ_STEP_MS = 1
"""How far every read of the clock advances it."""

FRAME_MS = 16
"""The shortest time between two animation frames on the page's clock (about 60 frames a second)."""

NAVIGATION: tuple[tuple[str, int, str], ...] = (
    ("navigationStart", 0, ""),
    ("redirectStart", 1, "redirect"),
    ("redirectEnd", 2, "redirect"),
    ("fetchStart", 3, ""),
    ("domainLookupStart", 4, ""),
    ("domainLookupEnd", 5, ""),
    ("connectStart", 6, ""),
    ("secureConnectionStart", 7, "https"),
    ("connectEnd", 8, ""),
    ("requestStart", 9, ""),
    ("responseStart", 10, ""),
    ("responseEnd", 11, ""),
    ("domLoading", 12, ""),
)
"""The navigation's phases before the document exists: (field, ms after navigationStart, when it
applies: always, only after a redirect, only over https). The last one is the capture time."""

NAVIGATION_MS = NAVIGATION[-1][1]
"""How long before the capture time ``performance.timeOrigin`` lies."""


def _source() -> str:
    return files("capreplay.browser").joinpath("determinism.js").read_text(encoding="utf-8")


def determinism_script(frozen_time: datetime, seed: int) -> str:
    """The init script whose clock starts at ``frozen_time`` and that seeds every random source."""
    values = {
        "__START_MS__": int(frozen_time.timestamp() * 1000),
        "__STEP_MS__": READ_STEP_MS,
        "__FRAME_MS__": FRAME_MS,
        "__NAVIGATION__": [list(phase) for phase in NAVIGATION],
        "__SEED__": seed & 0xFFFFFFFF,
    }
    script = _source()
    for placeholder, value in values.items():
        script = script.replace(placeholder, json.dumps(value))
    return script
