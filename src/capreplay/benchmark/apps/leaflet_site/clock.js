/* The side panel's two noUiSlider sliders, on one fixed day (the data's offset_day, 15 January 2026):
   - the time: an instant of that day in UTC, 00:00 to 24:00 by quarter hours, which the zone panel turns into
     the zone's local time;
   - the UTC offset: two handles, by quarter hours from the lowest offset of that day to the highest, which keep
     the zones whose offset lies between them and list them.
   Both sliders are 10 px an hour wide, so a drag of a number of pixels is a number of hours. No clock is
   read: every time shown is the fixed day plus the slider's value. */
window.MapClock = (function () {
  "use strict";

  var MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December"];
  var DEFAULT_TIME = 12;
  var PX_PER_HOUR = 10;
  var BORDERS = 2;  /* noUiSlider's target has a 1 px border each side: its base, the dragging scale, is inside */

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  /* 17.75 -> "17:45" (24 -> "24:00", the end of the day) */
  function clockText(hours) {
    var minutes = Math.round(hours * 60);
    return pad(Math.floor(minutes / 60)) + ":" + pad(minutes % 60);
  }

  /* 345 -> "+05:45", -210 -> "-03:30", 0 -> "+00:00" */
  function offsetText(minutes) {
    var size = Math.abs(minutes);
    return (minutes < 0 ? "-" : "+") + pad(Math.floor(size / 60)) + ":" + pad(size % 60);
  }

  function parseClock(text) {
    var match = /^(\d{1,2}):(\d{2})$/.exec(text || "");
    return match ? parseInt(match[1], 10) + parseInt(match[2], 10) / 60 : null;
  }

  function parseOffset(text) {
    var match = /^([+-])(\d{1,2}):(\d{2})$/.exec(text || "");
    if (!match) return null;
    return (match[1] === "-" ? -1 : 1) * (parseInt(match[2], 10) * 60 + parseInt(match[3], 10));
  }

  /* The date and time, in words, that is `minutes` after the start of `day` ("2026-01-15"). */
  function moment(day, minutes) {
    var parts = day.split("-").map(function (n) { return parseInt(n, 10); });
    var at = new Date(Date.UTC(parts[0], parts[1] - 1, parts[2]) + minutes * 60000);
    return {
      date: at.getUTCDate() + " " + MONTHS[at.getUTCMonth()] + " " + at.getUTCFullYear(),
      time: pad(at.getUTCHours()) + ":" + pad(at.getUTCMinutes())
    };
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /* options: day, zones ({name, countries, offset}), onChange(kind) with kind "time" or "offset",
     onZone(name) when a listed zone is clicked. */
  function create(options) {
    var day = options.day, zones = options.zones;
    var offsets = zones.map(function (z) { return z.offset; });
    var lowest = Math.min.apply(null, offsets), highest = Math.max.apply(null, offsets);
    var timeBox = document.getElementById("time-slider"), offsetBox = document.getElementById("offset-slider");
    var listing = document.getElementById("offset-zones"), summary = document.getElementById("offset-summary");
    var dayText = moment(day, 0).date;
    /* animate: false, since noUiSlider ignores a drag while an animated set() (the hash's state) is running */
    document.getElementById("time-title").textContent = "Time (UTC) on " + dayText;
    document.getElementById("offset-title").textContent = "UTC offset on " + dayText;

    timeBox.style.width = (24 * PX_PER_HOUR + BORDERS) + "px";
    offsetBox.style.width = ((highest - lowest) / 60 * PX_PER_HOUR + BORDERS) + "px";
    noUiSlider.create(timeBox, {
      start: DEFAULT_TIME, step: 0.25, range: { min: 0, max: 24 }, keyboardPageMultiplier: 4, animate: false,
      tooltips: { to: clockText },
      pips: { mode: "values", values: [0, 6, 12, 18, 24], density: 100 / 24, format: { to: clockText } }
    });
    noUiSlider.create(offsetBox, {
      start: [lowest / 60, highest / 60], connect: true, step: 0.25, range: { min: lowest / 60, max: highest / 60 },
      keyboardPageMultiplier: 4, animate: false,
      tooltips: [{ to: function (v) { return offsetText(Math.round(v * 60)); } },
        { to: function (v) { return offsetText(Math.round(v * 60)); } }],
      pips: { mode: "values", values: [-10, -5, 0, 5, 10], density: 100 / ((highest - lowest) / 60),
        format: { to: function (v) { return offsetText(Math.round(v * 60)); } } }
    });

    function time() { return parseFloat(timeBox.noUiSlider.get(true)); }
    function range() {
      return offsetBox.noUiSlider.get(true).map(function (v) { return Math.round(parseFloat(v) * 60); });
    }
    function inRange(offset) { var r = range(); return r[0] <= offset && offset <= r[1]; }
    function local(offset) { return moment(day, Math.round(time() * 60) + offset); }

    function showTime() {
      var at = moment(day, Math.round(time() * 60));
      document.getElementById("time-value").textContent = at.date + ", " + at.time + " UTC";
    }

    function showOffsets() {
      var r = range();
      listing.replaceChildren();
      if (r[0] === lowest && r[1] === highest) {
        summary.textContent = "All " + zones.length + " time zones: offsets from UTC" + offsetText(lowest) +
          " to UTC" + offsetText(highest) + ".";
        return;
      }
      var kept = zones.filter(function (z) { return inRange(z.offset); }).sort(function (a, b) {
        return a.offset - b.offset || a.name.localeCompare(b.name, "en");
      });
      summary.textContent = kept.length + " of " + zones.length + " time zones have an offset from UTC" +
        offsetText(r[0]) + " to UTC" + offsetText(r[1]) + (kept.length ? ":" : ".");
      kept.forEach(function (zone) {
        var item = el("li");
        var link = el("button", { type: "button", class: "link", "data-offset-zone": zone.name }, zone.name);
        link.addEventListener("click", function () { options.onZone(zone.name); });
        var at = local(zone.offset);
        item.appendChild(link);
        item.appendChild(el("span", { class: "offset-facts" }, "UTC" + offsetText(zone.offset) + " · " +
          zone.countries.join(", ") + " · " + at.time + " on " + at.date));
        listing.appendChild(item);
      });
    }

    timeBox.noUiSlider.on("update", function () { showTime(); showOffsets(); options.onChange("time"); });
    offsetBox.noUiSlider.on("update", function () { showOffsets(); options.onChange("offset"); });

    return {
      dayText: dayText,
      inRange: inRange,
      time: time,
      local: local,
      /* "&time=HH:MM&utc=+HH:MM,+HH:MM", each part only where its slider is off its default */
      hashPart: function () {
        var r = range(), part = "";
        if (time() !== DEFAULT_TIME) part += "&time=" + clockText(time());
        if (r[0] !== lowest || r[1] !== highest) part += "&utc=" + offsetText(r[0]) + "," + offsetText(r[1]);
        return part;
      },
      /* the state a hash's parameters give ({time, utc}: texts or undefined); what is missing is the default */
      apply: function (params) {
        var at = parseClock(params.time);
        var bounds = (params.utc || "").split(",").map(parseOffset);
        var low = bounds.length === 2 && bounds[0] !== null && bounds[1] !== null ? bounds : [lowest, highest];
        timeBox.noUiSlider.set(at === null ? DEFAULT_TIME : at);
        offsetBox.noUiSlider.set([low[0] / 60, low[1] / 60]);
      }
    };
  }

  return { create: create, offsetText: offsetText, clockText: clockText };
})();
