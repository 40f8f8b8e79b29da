/* The world map: Natural Earth countries (world-atlas, decoded with topojson-client), IANA time zones (tzdata)
   and ISO 3166 codes (iso-codes via pycountry). The URL's hash #zoom/lat/lng[/country][&time=..][&utc=..] is the
   map's state; the time and offset sliders (clock.js) write their part only when moved off their defaults. */
(function () {
  "use strict";

  var INITIAL = { zoom: 2, lat: 20, lng: 10 };
  var SHADES = [[0, "#d5d9de"], [1, "#b8d8b0"], [2, "#7fbf7b"], [4, "#3f9a58"], [10, "#1b6b3a"]];

  var map = L.map("map", {
    minZoom: 1, maxZoom: 8, zoomSnap: 1, inertia: false, worldCopyJump: false,
    zoomAnimation: false, fadeAnimation: false, markerZoomAnimation: false
  });
  map.attributionControl.setPrefix("Leaflet 1.9.4");
  L.control.scale({ imperial: false }).addTo(map);

  var panel = document.getElementById("panel"), details = document.getElementById("details");
  var results = document.getElementById("results");
  var byKey = {}, byAlpha2 = {}, countryLayers = {}, zoneLayers = {}, zones = {}, isoNames = {};
  var selectedKey = null, selectedZone = null, applying = false, clock = null, zoneLayer = null;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function cssName(text) { return text.replace(/[^A-Za-z0-9_-]/g, "-"); }

  function shade(count) {
    var colour = SHADES[0][1];
    SHADES.forEach(function (step) { if (count >= step[0]) colour = step[1]; });
    return colour;
  }

  /* Natural Earth's Russia and Fiji step from 180 to -180 and back: keep each ring continuous (as the
     builder does for its views), except Antarctica's, which runs round the pole. */
  function unwrap(ring) {
    if (ring.some(function (p) { return p[1] < -85; })) return ring;
    var out = [ring[0].slice()];
    for (var i = 1; i < ring.length; i++) {
      var lon = ring[i][0], previous = out[i - 1][0];
      lon += 360 * Math.round((previous - lon) / 360);
      out.push([lon, ring[i][1]]);
    }
    var lons = out.map(function (p) { return p[0]; });
    var shift = 360 * Math.round((Math.min.apply(null, lons) + Math.max.apply(null, lons)) / 2 / 360);
    return shift ? out.map(function (p) { return [p[0] - shift, p[1]]; }) : out;
  }

  function unwrapGeometry(geometry) {
    if (geometry.type === "Polygon") geometry.coordinates = geometry.coordinates.map(unwrap);
    if (geometry.type === "MultiPolygon") {
      geometry.coordinates = geometry.coordinates.map(function (polygon) { return polygon.map(unwrap); });
    }
    return geometry;
  }

  /* "&time=17:45&utc=+05:30,+05:45" after the view: the sliders' parameters */
  function hashParams(hash) {
    var params = {};
    hash.replace(/^#/, "").split("&").slice(1).forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at > 0) params[pair.slice(0, at)] = decodeURIComponent(pair.slice(at + 1));
    });
    return params;
  }

  function parseHash(hash) {
    var parts = hash.replace(/^#/, "").split("&")[0].split("/");
    if (parts.length < 3) return null;
    var zoom = parseInt(parts[0], 10), lat = parseFloat(parts[1]), lng = parseFloat(parts[2]);
    if (isNaN(zoom) || isNaN(lat) || isNaN(lng)) return null;
    return { zoom: zoom, lat: lat, lng: lng, key: parts[3] ? decodeURIComponent(parts[3]) : null };
  }

  function writeHash() {
    if (applying) return;
    var c = map.getCenter();
    var hash = "#" + map.getZoom() + "/" + c.lat.toFixed(2) + "/" + c.lng.toFixed(2) +
      (selectedKey ? "/" + encodeURIComponent(selectedKey) : "") + (clock ? clock.hashPart() : "");
    if (hash !== location.hash) history.replaceState(null, "", hash);
  }

  function setView(view) {
    applying = true;
    map.setView([view.lat, view.lng], view.zoom);
    applying = false;
  }

  function applyHash() {
    var state = parseHash(location.hash);
    setView(state || INITIAL);
    applying = true;  // the state comes from the URL: nothing to write back
    if (state && state.key && byKey[state.key]) showCountry(state.key);
    else if (Object.keys(byKey).length) clearSelection();
    if (clock) clock.apply(hashParams(location.hash));
    applying = false;
  }

  function fact(table, label, value, id) {
    var row = el("tr");
    row.appendChild(el("th", { scope: "row" }, label));
    row.appendChild(el("td", id ? { id: id } : {}, value || "—"));
    table.appendChild(row);
  }

  /* "UTC+10:30 · 08:00 on 16 January 2026": a zone's offset and its local time at the time slider's instant */
  function zoneClock(name) {
    var offset = zones[name].offset, at = clock.local(offset);
    return "UTC" + MapClock.offsetText(offset) + " · " + at.time + " on " + at.date;
  }

  /* The local times the panel shows (the zone panel's row, the country panel's zones) at the slider's instant. */
  function showLocalTime() {
    if (!clock) return;
    var cell = document.getElementById("zone-local");
    if (cell && selectedZone) {
      var at = clock.local(zones[selectedZone].offset);
      cell.textContent = at.time + " on " + at.date + " (at " + MapClock.clockText(clock.time()) + " UTC)";
    }
    details.querySelectorAll("span.clock[data-clock]").forEach(function (span) {
      span.textContent = zoneClock(span.getAttribute("data-clock"));
    });
  }

  /* Keep on the map only the zone dots whose offset the offset slider keeps. */
  function filterZones() {
    Object.keys(zoneLayers).forEach(function (name) {
      var keep = clock.inRange(zones[name].offset);
      zoneLayers[name].forEach(function (layer) {
        if (keep && !zoneLayer.hasLayer(layer)) zoneLayer.addLayer(layer);
        if (!keep && zoneLayer.hasLayer(layer)) zoneLayer.removeLayer(layer);
      });
    });
    markSelected(zoneLayers, selectedZone, null);
  }

  function clockChanged(kind) {
    if (!clock) return;  // noUiSlider reports its start values while the clock is being made
    if (kind === "time") showLocalTime();
    else filterZones();
    writeHash();
  }

  function markSelected(layers, key, previous) {
    function mark(name, on) {
      (layers[name] || []).forEach(function (layer) {
        var path = layer.getElement();  // none while its layer is switched off
        if (path) path.classList.toggle("selected", on);
      });
    }
    if (previous) mark(previous, false);
    if (key) mark(key, true);
  }

  function clearSelection() {
    markSelected(countryLayers, null, selectedKey);
    markSelected(zoneLayers, null, selectedZone);
    selectedKey = selectedZone = null;
    details.replaceChildren(el("h2", {}, "Countries and time zones"), el("p", { id: "intro" },
      "Click a country to see its ISO 3166 codes and time zones, or a red dot for a time zone's location. " +
      "Search finds a country by its name or code; the list page has every country."));
    writeHash();
  }

  function closeButton() {
    var close = el("button", { type: "button", class: "link close", "aria-label": "Close" }, "Close ✕");
    close.addEventListener("click", clearSelection);
    return close;
  }

  function showCountry(key) {
    var country = byKey[key];
    markSelected(zoneLayers, null, selectedZone);
    selectedZone = null;
    markSelected(countryLayers, key, selectedKey);
    selectedKey = key;
    var table = el("table", { class: "facts" });
    fact(table, "Name on the map", country.name);
    fact(table, "ISO 3166 name", country.iso_name);
    fact(table, "Official name", country.official_name);
    fact(table, "Alpha-2 code", country.alpha2);
    fact(table, "Alpha-3 code", country.alpha3);
    fact(table, "Numeric code", country.numeric);
    var list = el("ul", { class: "zone-list" });
    country.zones.forEach(function (name) {
      var item = el("li");
      var link = el("button", { type: "button", class: "link", "data-zone": name }, name);
      link.addEventListener("click", function () { showZone(name, true); });
      item.appendChild(link);
      if (zones[name].comment) item.appendChild(el("span", { class: "comment" }, zones[name].comment));
      item.appendChild(el("span", { class: "clock", "data-clock": name }));
      list.appendChild(item);
    });
    details.replaceChildren(closeButton(), el("h2", { id: "panel-title" }, country.name), table,
      el("h3", {}, "Time zones (" + country.zones.length + ")"),
      country.zones.length ? list : el("p", {}, "No time zone of the tz database lists this area."));
    panel.scrollTop = 0;  // a new panel starts at its top, below the sliders, wherever the last one was scrolled to
    showLocalTime();
    writeHash();
  }

  function showZone(name, centre) {
    var zone = zones[name];
    markSelected(zoneLayers, name, selectedZone);
    selectedZone = name;
    var table = el("table", { class: "facts" });
    fact(table, "Latitude", Math.abs(zone.lat).toFixed(4) + "° " + (zone.lat < 0 ? "S" : "N") +
      " (" + zone.lat.toFixed(4) + ")");
    fact(table, "Longitude", Math.abs(zone.lon).toFixed(4) + "° " + (zone.lon < 0 ? "W" : "E") +
      " (" + zone.lon.toFixed(4) + ")");
    fact(table, "Comment", zone.comment);
    fact(table, "UTC offset", "UTC" + MapClock.offsetText(zone.offset) + " on " + clock.dayText, "zone-offset");
    fact(table, "Local time", "", "zone-local");
    var list = el("ul", { class: "zone-list" });
    zone.countries.forEach(function (code) {
      var item = el("li");
      var country = byAlpha2[code];
      if (country) {
        var link = el("button", { type: "button", class: "link", "data-country": country.key },
          country.name + " (" + code + ")");
        link.addEventListener("click", function () { selectCountry(country.key); });
        item.appendChild(link);
      } else {  // a country the map draws as part of another (Réunion within France)
        item.textContent = (isoNames[code] || code) + " (" + code + ")";
      }
      list.appendChild(item);
    });
    details.replaceChildren(closeButton(), el("h2", { id: "panel-title" }, name),
      el("p", { class: "kind" }, "Time zone (principal location)"), table,
      el("h3", {}, "Countries (" + zone.countries.length + ")"), list);
    panel.scrollTop = 0;
    showLocalTime();
    if (centre) {
      applying = true;
      map.setView([zone.lat, zone.lon], Math.max(map.getZoom(), 5));
      applying = false;
      writeHash();
    }
  }

  function selectCountry(key) {
    var view = byKey[key].view;
    setView({ zoom: view[0], lat: view[1], lng: view[2] });
    showCountry(key);
  }

  function fold(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim();
  }

  /* 0: a name or code is the query; 1: the map's or ISO name starts with it; 2: the official name does;
     3: a name holds it elsewhere; -1: no match. */
  function rank(country, query) {
    var names = [country.name, country.iso_name].map(fold), official = fold(country.official_name);
    var codes = [country.alpha2, country.alpha3, country.numeric].map(fold);
    if (names.concat(codes, [official]).indexOf(query) >= 0) return 0;
    if (names.some(function (n) { return n.indexOf(query) === 0; })) return 1;
    if (official && official.indexOf(query) === 0) return 2;
    if (names.concat([official]).some(function (n) { return n.indexOf(query) > 0; })) return 3;
    return -1;
  }

  function search(text) {
    var query = fold(text);
    results.replaceChildren();
    if (!query) return;
    var found = Object.keys(byKey).map(function (key) { return [rank(byKey[key], query), byKey[key]]; })
      .filter(function (pair) { return pair[0] >= 0; })
      .sort(function (a, b) { return a[0] - b[0] || a[1].name.localeCompare(b[1].name, "en"); })
      .map(function (pair) { return pair[1]; });
    if (!found.length) {
      results.appendChild(el("p", { class: "search-summary" }, "No country matches “" + text.trim() + "”."));
      return;
    }
    results.appendChild(el("p", { class: "search-summary" }, found.length + (found.length === 1 ? " country matches" :
      " countries match") + " “" + text.trim() + "”:"));
    var list = el("ol");
    found.forEach(function (country) {
      var item = el("li");
      var link = el("button", { type: "button", class: "link", "data-country": country.key }, country.name);
      link.addEventListener("click", function () { selectCountry(country.key); });
      item.appendChild(link);
      if (country.alpha3) item.appendChild(document.createTextNode(" (" + country.alpha3 + ")"));
      list.appendChild(item);
    });
    results.appendChild(list);
    selectCountry(found[0].key);
  }

  function graticule() {
    var lines = [];
    for (var lon = -180; lon <= 180; lon += 30) lines.push([[-80, lon], [80, lon]]);
    for (var lat = -60; lat <= 60; lat += 30) lines.push([[lat, -180], [lat, 180]]);
    return L.polyline(lines, { className: "graticule", interactive: false });
  }

  function legend() {
    var control = L.control({ position: "bottomleft" });
    control.onAdd = function () {
      var box = el("div", { class: "legend" });
      box.appendChild(el("h4", {}, "Time zones per country"));
      SHADES.forEach(function (step, i) {
        var next = SHADES[i + 1];
        var label = next ? (next[0] - 1 > step[0] ? step[0] + "–" + (next[0] - 1) : String(step[0])) : step[0] + " or more";
        var row = el("div");
        var swatch = el("i");
        swatch.style.background = step[1];
        row.appendChild(swatch);
        row.appendChild(document.createTextNode(label));
        box.appendChild(row);
      });
      return box;
    };
    return control;
  }

  function load(path) {
    return fetch(path).then(function (response) {
      if (!response.ok) throw new Error(path + ": HTTP " + response.status);
      return response.json();
    });
  }

  setView(parseHash(location.hash) || INITIAL);

  Promise.all([load("data/countries-50m.json"), load("data/countries.json"), load("data/zones.geojson")])
    .then(function (loaded) {
      var topology = loaded[0], info = loaded[1], zoneData = loaded[2];
      var byName = {};
      info.countries.forEach(function (c) {
        byKey[c.key] = c;
        byName[c.name] = c;
        if (c.alpha2 && (!byAlpha2[c.alpha2] || c.key === c.alpha3)) byAlpha2[c.alpha2] = c;
      });
      isoNames = info.iso_names;
      zoneData.features.forEach(function (f) { zones[f.properties.name] = f.properties; });
      map.attributionControl.addAttribution(info.attribution);

      var features = topojson.feature(topology, topology.objects.countries).features;
      var countryLayer = L.geoJSON(null, {
        style: function (feature) {
          var c = byName[feature.properties.name];
          return { className: "country country-" + cssName(c.key), fillColor: shade(c.zones.length) };
        },
        onEachFeature: function (feature, layer) {
          var key = byName[feature.properties.name].key;
          (countryLayers[key] = countryLayers[key] || []).push(layer);
          layer.on("click", function () { showCountry(key); });
        }
      });
      features.forEach(function (f) { f.geometry = unwrapGeometry(f.geometry); countryLayer.addData(f); });

      zoneLayer = L.geoJSON(zoneData, {
        pointToLayer: function (feature, latlng) {
          return L.circleMarker(latlng, { radius: 4, className: "zone zone-" + cssName(feature.properties.name) });
        },
        onEachFeature: function (feature, layer) {
          var name = feature.properties.name;
          (zoneLayers[name] = zoneLayers[name] || []).push(layer);
          layer.bindTooltip(name, { direction: "top", offset: [0, -4] });
          layer.on("click", function () { showZone(name, false); });
        }
      });
      var lines = graticule();
      lines.addTo(map);
      countryLayer.addTo(map);
      zoneLayer.addTo(map);
      L.control.layers(null, { "Countries": countryLayer, "Time zones": zoneLayer, "Graticule": lines },
        { collapsed: false }).addTo(map);
      legend().addTo(map);
      clock = MapClock.create({
        day: zoneData.offset_day,
        zones: zoneData.features.map(function (f) { return f.properties; }),
        onChange: clockChanged,
        onZone: function (name) { showZone(name, true); }
      });
      applyHash();
      map.on("moveend", writeHash);
      window.addEventListener("hashchange", applyHash);
      document.getElementById("search").addEventListener("submit", function (event) {
        event.preventDefault();
        search(document.getElementById("q").value);
      });
      document.body.setAttribute("data-ready", "true");
    })
    .catch(function (error) {
      details.replaceChildren(el("h2", {}, "The map data did not load"), el("p", {}, String(error)));
    });
})();
