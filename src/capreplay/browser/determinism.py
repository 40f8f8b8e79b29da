"""The script injected before any page script, in capture and in replay alike.

It freezes ``Date`` and ``performance.now`` at the snapshot's frozen time and makes ``Math.random``,
``crypto.getRandomValues`` and ``crypto.randomUUID`` deterministic from a seed, so that a page captured
once replays to the same DOM and the same pixels, and a cache-busting ``?_=<Date.now()>`` asks for the
URL that was archived. The idea is Web Page Replay's ``deterministic.js``; the code is ours.
"""

from __future__ import annotations

import json
from datetime import datetime

DEFAULT_SEED = 20_240_601
"""The seed of ``Math.random`` and ``crypto`` when a capture names none."""

_TEMPLATE = r"""
(() => {
  if (globalThis.__capreplayFrozen) { return; }
  Object.defineProperty(globalThis, '__capreplayFrozen', {value: true, enumerable: false});
  const FROZEN_MS = __FROZEN_MS__;
  let state = __SEED__ >>> 0;
  // mulberry32: tiny, fast, and the same sequence in every browser.
  const next = () => {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const RealDate = Date;
  function FrozenDate(...args) {
    if (!new.target) { return new RealDate(FROZEN_MS).toString(); }
    return args.length === 0 ? new RealDate(FROZEN_MS) : new RealDate(...args);
  }
  FrozenDate.prototype = RealDate.prototype;
  FrozenDate.now = () => FROZEN_MS;
  FrozenDate.parse = RealDate.parse;
  FrozenDate.UTC = RealDate.UTC;
  Object.defineProperty(FrozenDate.prototype, 'constructor', {value: FrozenDate});
  globalThis.Date = FrozenDate;
  if (globalThis.performance) {
    const perfNow = () => 0;
    try { Object.defineProperty(globalThis.performance, 'now', {value: perfNow, configurable: true}); }
    catch (e) { globalThis.performance.now = perfNow; }
  }
  Math.random = next;
  if (globalThis.crypto) {
    const fill = (array) => {
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let i = 0; i < bytes.length; i++) { bytes[i] = Math.floor(next() * 256); }
      return array;
    };
    try { Object.defineProperty(globalThis.crypto, 'getRandomValues', {value: fill, configurable: true}); }
    catch (e) { globalThis.crypto.getRandomValues = fill; }
    const uuid = () => {
      const b = fill(new Uint8Array(16));
      b[6] = (b[6] & 0x0f) | 0x40;
      b[8] = (b[8] & 0x3f) | 0x80;
      const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    };
    try { Object.defineProperty(globalThis.crypto, 'randomUUID', {value: uuid, configurable: true}); }
    catch (e) { globalThis.crypto.randomUUID = uuid; }
  }
})();
"""


def determinism_script(frozen_time: datetime, seed: int) -> str:
    """The init script that freezes the clock at ``frozen_time`` and seeds every random source."""
    frozen_ms = int(frozen_time.timestamp() * 1000)
    return _TEMPLATE.replace("__FROZEN_MS__", json.dumps(frozen_ms)).replace("__SEED__", json.dumps(seed & 0xFFFFFFFF))
