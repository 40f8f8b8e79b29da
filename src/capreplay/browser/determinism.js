// The deterministic clock and randomness of capreplay, injected before any page script in capture
// and in replay alike. The rules are documented in determinism.py; placeholders are filled there.
(() => {
  if (globalThis.__capreplayDeterministic) { return; }
  Object.defineProperty(globalThis, '__capreplayDeterministic', {value: true, enumerable: false});

  const START = __START_MS__;   // the first read of the clock returns the capture time
  const STEP = __STEP_MS__;     // every read advances the clock this much
  const FRAME = __FRAME_MS__;   // an animation frame is at least this much later than the one before
  const NAVIGATION = __NAVIGATION__;  // [field, ms after navigationStart, '' | 'redirect' | 'https']
  const NAV_MS = NAVIGATION[NAVIGATION.length - 1][1];
  const ORIGIN = START - NAV_MS;  // performance.timeOrigin, performance.timing.navigationStart

  // ------------------------------------------------------------------ the one counter
  let next = START;  // what the next read returns
  let last = START;  // what the last read returned: the latest time the page has seen
  const read = () => { last = next; next += STEP; return last; };
  const atLeast = (t) => { if (t > next) { next = t; } };

  const RealDate = Date;
  // Replacements keep the enumerability of what they replace, so the page sees the same property lists.
  const enumerable = (obj, name) => (Object.getOwnPropertyDescriptor(obj, name) || {}).enumerable === true;
  const define = (obj, name, value) => {
    if (obj) {
      Object.defineProperty(obj, name, {value, writable: true, configurable: true, enumerable: enumerable(obj, name)});
    }
  };
  const getter = (proto, name, get) => {
    if (proto && Object.getOwnPropertyDescriptor(proto, name)) {
      Object.defineProperty(proto, name, {get, configurable: true, enumerable: enumerable(proto, name)});
    }
  };
  const realGetter = (proto, name) => {
    const d = proto && Object.getOwnPropertyDescriptor(proto, name);
    return d && d.get ? d.get : () => 0;
  };

  // ------------------------------------------------------------------ Date and Intl
  // A function expression: a declaration named Date would be hoisted over RealDate.
  const ClockDate = function Date(...args) {
    if (new.target === undefined) { return new RealDate(read()).toString(); }
    return Reflect.construct(RealDate, args.length ? args : [read()], new.target);
  };
  Object.setPrototypeOf(ClockDate, RealDate);  // Date.UTC, Date.parse
  Object.defineProperty(ClockDate, 'length', {value: 7});
  ClockDate.prototype = RealDate.prototype;
  define(ClockDate, 'now', function now() { return read(); });
  define(RealDate.prototype, 'constructor', ClockDate);
  globalThis.Date = ClockDate;

  const dtf = Intl.DateTimeFormat.prototype;
  const realFormat = realGetter(dtf, 'format');
  const formats = new WeakMap();
  getter(dtf, 'format', function () {
    if (!formats.has(this)) {
      const f = realFormat.call(this);
      formats.set(this, (d) => f(d === undefined ? read() : d));
    }
    return formats.get(this);
  });
  const realParts = dtf.formatToParts;
  define(dtf, 'formatToParts', function formatToParts(d) { return realParts.call(this, d === undefined ? read() : d); });
  if (globalThis.Temporal && Temporal.Now) {
    const instant = () => Temporal.Instant.fromEpochMilliseconds(read());
    const zone = (tz) => (tz === undefined ? Temporal.Now.timeZoneId() : tz);
    define(Temporal.Now, 'instant', instant);
    define(Temporal.Now, 'zonedDateTimeISO', (tz) => instant().toZonedDateTimeISO(zone(tz)));
    define(Temporal.Now, 'plainDateTimeISO', (tz) => instant().toZonedDateTimeISO(zone(tz)).toPlainDateTime());
    define(Temporal.Now, 'plainDateISO', (tz) => instant().toZonedDateTimeISO(zone(tz)).toPlainDate());
    define(Temporal.Now, 'plainTimeISO', (tz) => instant().toZonedDateTimeISO(zone(tz)).toPlainTime());
  }

  // ------------------------------------------------------------------ timers and frames
  // A timer never fires before its due time on the page's clock, as in a real browser: a debounce
  // that checks how long it has waited goes on after one round, not after delay/STEP rounds.
  const toDelay = (d) => Math.max(0, Number(d) | 0);
  const realSetTimeout = globalThis.setTimeout;
  const realSetInterval = globalThis.setInterval;
  define(globalThis, 'setTimeout', function setTimeout(handler, delay, ...args) {
    if (typeof handler !== 'function') { return realSetTimeout.call(globalThis, handler, delay, ...args); }
    const due = last + toDelay(delay);
    return realSetTimeout.call(globalThis, function () { atLeast(due); return handler.apply(this, args); }, delay);
  });
  define(globalThis, 'setInterval', function setInterval(handler, delay, ...args) {
    if (typeof handler !== 'function') { return realSetInterval.call(globalThis, handler, delay, ...args); }
    const every = toDelay(delay);
    let due = last;
    return realSetInterval.call(globalThis, function () { due += every; atLeast(due); return handler.apply(this, args); }, delay);
  });

  // One frame, one timestamp: every callback of a frame gets the frame's time, a read of the clock.
  const realRAF = globalThis.requestAnimationFrame;
  let frameId = NaN, frameTime = -Infinity, inFrame = false;
  if (realRAF) {
    define(globalThis, 'requestAnimationFrame', function requestAnimationFrame(callback) {
      if (typeof callback !== 'function') { return realRAF.call(globalThis, callback); }
      return realRAF.call(globalThis, (realTime) => {
        if (realTime !== frameId) {
          frameId = realTime;
          atLeast(frameTime + FRAME);
          frameTime = read();
        }
        inFrame = true;
        try { return callback(frameTime - ORIGIN); } finally { inFrame = false; }
      });
    });
  }
  const Timeline = globalThis.AnimationTimeline && AnimationTimeline.prototype;
  const realCurrentTime = realGetter(Timeline, 'currentTime');
  getter(Timeline, 'currentTime', function () {
    if (this !== document.timeline) { return realCurrentTime.call(this); }
    return (inFrame ? frameTime : last) - ORIGIN;
  });

  // ------------------------------------------------------------------ performance
  const Perf = globalThis.Performance && Performance.prototype;
  define(Perf, 'now', function now() { return read() - ORIGIN; });
  getter(Perf, 'timeOrigin', () => ORIGIN);

  // performance.timing: the navigation's fetch phases at fixed offsets (a redirect's only if there was
  // one, TLS only over https), the unload of a previous document never (it would make a page's times
  // depend on the page before it), then every document phase stamped, in order, with the last time the
  // clock returned when it is first seen to have happened.
  const ZERO = ['unloadEventStart', 'unloadEventEnd'];
  const PHASES = [...NAVIGATION.map(([name]) => name), 'domInteractive', 'domContentLoadedEventStart',
    'domContentLoadedEventEnd', 'domComplete', 'loadEventStart', 'loadEventEnd'];
  const OFFSETS = new Map(NAVIGATION.map(([name, ms, when]) => [name, [ms, when]]));
  const TimingProto = globalThis.PerformanceTiming && PerformanceTiming.prototype;
  const realTiming = new Map(PHASES.map((name) => [name, realGetter(TimingProto, name)]));
  const happened = (name) => realTiming.get(name).call(performance.timing) !== 0;
  const stamps = new Map();
  const stamp = (name) => {
    for (const phase of PHASES) {
      if (!OFFSETS.has(phase) && !stamps.has(phase)) { stamps.set(phase, last); }
      if (phase === name) { return; }
    }
  };
  const timing = (name) => {
    if (ZERO.includes(name)) { return 0; }
    if (OFFSETS.has(name)) {
      const [ms, when] = OFFSETS.get(name);
      const applies = when === 'redirect' ? happened(name) : when === 'https' ? location.protocol === 'https:' : true;
      return applies ? ORIGIN + ms : 0;
    }
    if (!stamps.has(name)) {
      if (!happened(name)) { return 0; }
      stamp(name);
    }
    return stamps.get(name);
  };
  const TIMING = [...PHASES, ...ZERO];
  for (const name of TIMING) { getter(TimingProto, name, () => timing(name)); }
  define(TimingProto, 'toJSON', function toJSON() { return Object.fromEntries(TIMING.map((n) => [n, timing(n)])); });
  const onPhase = (event) => {
    if (event.type === 'DOMContentLoaded') { stamp('domContentLoadedEventStart'); }
    else if (event.type === 'load' && event.target === document) { stamp('loadEventStart'); }
    else if (event.type === 'readystatechange' && event.target === document) {
      stamp(document.readyState === 'complete' ? 'domComplete' : 'domInteractive');
    }
  };
  // Capture listeners on window, registered before any page script: they run before the page's own.
  for (const type of ['readystatechange', 'DOMContentLoaded', 'load']) { addEventListener(type, onPhase, true); }

  // Entries. The navigation entry follows performance.timing; an entry the page did not make itself
  // (resource, paint, event, ...) is stamped, when the page first reads it, with the last time the clock
  // returned, so it never lies after a later read; marks and measures carry the times the page gave them.
  const relative = (t) => (t === 0 ? 0 : t - ORIGIN);
  const seen = new WeakMap();
  const seenAt = (entry) => {
    if (!seen.has(entry)) { seen.set(entry, last - ORIGIN); }
    return seen.get(entry);
  };
  const Nav = globalThis.PerformanceNavigationTiming;
  const isNav = (entry) => Nav !== undefined && entry instanceof Nav;
  const PAGE_MADE = new Set(['mark', 'measure']);
  const TIME_FIELDS = new Set(['startTime', 'duration']);
  const entryTimes = (proto, names) => {
    for (const name of names) {
      const real = realGetter(proto, name);
      TIME_FIELDS.add(name);
      getter(proto, name, function () {
        if (isNav(this)) {
          if (TIMING.includes(name)) { return relative(timing(name)); }
          return real.call(this) === 0 ? 0 : relative(timing('responseStart'));
        }
        return real.call(this) === 0 ? 0 : seenAt(this);
      });
    }
  };
  const Entry = globalThis.PerformanceEntry && PerformanceEntry.prototype;
  const realStart = realGetter(Entry, 'startTime');
  const realDuration = realGetter(Entry, 'duration');
  getter(Entry, 'startTime', function () {
    if (isNav(this)) { return 0; }
    return PAGE_MADE.has(this.entryType) ? realStart.call(this) : seenAt(this);
  });
  getter(Entry, 'duration', function () {
    if (isNav(this)) { return relative(timing('loadEventEnd')); }
    return PAGE_MADE.has(this.entryType) ? realDuration.call(this) : 0;
  });
  const proto = (name) => globalThis[name] && globalThis[name].prototype;
  const RESOURCE = ['workerStart', 'redirectStart', 'redirectEnd', 'fetchStart', 'domainLookupStart',
    'domainLookupEnd', 'connectStart', 'connectEnd', 'secureConnectionStart', 'requestStart', 'responseStart',
    'responseEnd', 'finalResponseHeadersStart', 'firstInterimResponseStart', 'workerRouterEvaluationStart',
    'workerCacheLookupStart'];
  entryTimes(proto('PerformanceResourceTiming'), RESOURCE);
  entryTimes(proto('PerformanceNavigationTiming'), ['unloadEventStart', 'unloadEventEnd', 'domInteractive',
    'domContentLoadedEventStart', 'domContentLoadedEventEnd', 'domComplete', 'loadEventStart', 'loadEventEnd',
    'criticalCHRestart', 'activationStart']);
  entryTimes(proto('PerformanceEventTiming'), ['processingStart', 'processingEnd']);
  entryTimes(proto('LargestContentfulPaint'), ['renderTime', 'loadTime']);
  entryTimes(proto('PerformanceElementTiming'), ['renderTime', 'loadTime']);
  entryTimes(proto('LayoutShift'), ['lastInputTime']);
  entryTimes(proto('IntersectionObserverEntry'), ['time']);
  for (const name of ['PerformanceEntry', 'PerformanceResourceTiming', 'PerformanceNavigationTiming',
    'PerformanceEventTiming', 'LargestContentfulPaint', 'PerformanceElementTiming', 'LayoutShift']) {
    const p = proto(name);
    const realJSON = p && Object.prototype.hasOwnProperty.call(p, 'toJSON') ? p.toJSON : undefined;
    if (realJSON) {
      define(p, 'toJSON', function toJSON() {
        const json = realJSON.call(this);
        for (const key of Object.keys(json)) { if (TIME_FIELDS.has(key)) { json[key] = this[key]; } }
        return json;
      });
    }
  }
  if (Perf) {
    const realMark = Perf.mark;
    const realMeasure = Perf.measure;
    const realPerfJSON = Perf.toJSON;
    define(Perf, 'mark', function mark(name, options) {
      if (options && options.startTime !== undefined) { return realMark.call(this, name, options); }
      return realMark.call(this, name, Object.assign({}, options, {startTime: read() - ORIGIN}));
    });
    // A measure's missing end is now on our clock, and a timing field named as a mark is our timing's.
    const at = (mark) => (typeof mark === 'string' && TIMING.includes(mark) ? relative(timing(mark)) : mark);
    define(Perf, 'measure', function measure(name, start, end) {
      let options;
      if (start !== null && typeof start === 'object') {
        options = Object.assign({}, start);
        if (options.start !== undefined) { options.start = at(options.start); }
        if (options.end !== undefined) { options.end = at(options.end); }
        if (options.end === undefined && !(options.start !== undefined && options.duration !== undefined)) {
          options.end = read() - ORIGIN;
        }
      } else {
        options = {start: start === undefined ? 0 : at(start), end: end === undefined ? read() - ORIGIN : at(end)};
      }
      return realMeasure.call(this, name, options);
    });
    define(Perf, 'toJSON', function toJSON() {
      return Object.assign(realPerfJSON.call(this), {timeOrigin: ORIGIN, timing: this.timing.toJSON()});
    });
  }

  // ------------------------------------------------------------------ events and the document
  const events = new WeakMap();
  getter(globalThis.Event && Event.prototype, 'timeStamp', function () {
    if (!events.has(this)) { events.set(this, last - ORIGIN); }
    return events.get(this);
  });
  // Without a Last-Modified header, document.lastModified is the real now; an archived one from the
  // capture session is replaced too, so capture and replay agree.
  const DocProto = globalThis.Document && Document.prototype;
  const realLastModified = realGetter(DocProto, 'lastModified');
  getter(DocProto, 'lastModified', function () {
    const value = realLastModified.call(this);
    if (RealDate.parse(value) < START - 60000) { return value; }
    const d = new RealDate(START);
    const two = (n) => String(n).padStart(2, '0');
    return `${two(d.getMonth() + 1)}/${two(d.getDate())}/${d.getFullYear()} `
      + `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  });

  // ------------------------------------------------------------------ randomness
  let state = __SEED__ >>> 0;
  // mulberry32: tiny, fast, and the same sequence in every browser.
  const random = () => {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  Math.random = random;
  if (globalThis.crypto) {
    const fill = (array) => {
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let i = 0; i < bytes.length; i++) { bytes[i] = Math.floor(random() * 256); }
      return array;
    };
    const uuid = () => {
      const b = fill(new Uint8Array(16));
      b[6] = (b[6] & 0x0f) | 0x40;
      b[8] = (b[8] & 0x3f) | 0x80;
      const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    };
    for (const [name, value] of [['getRandomValues', fill], ['randomUUID', uuid]]) {
      try { define(globalThis.crypto, name, value); } catch (e) { globalThis.crypto[name] = value; }
    }
  }
})();
