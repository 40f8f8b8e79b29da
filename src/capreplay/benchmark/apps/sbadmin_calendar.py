"""The dashboard's release calendar: every release of every project on a FullCalendar calendar, a Bootstrap popover
for each. Pure: figures in, text out.

The calendar is FullCalendar 6.1.22 (npm ``fullcalendar``, MIT), the standalone global bundle
(``index.global.min.js``: core with the day-grid, time-grid, list, multi-month and interaction plugins, its CSS
injected by the script), served from the dashboard's ``vendor/`` folder like the timeline's plugins. The page is the
theme's own blank page with SB Admin's card around the calendar and a sidebar link of its own ("Calendar", after
"Tables"), which every page of the dashboard layout gains.

- One all-day event per release ("Flask 2.0.0"), in its project's colour (the colours of the charts), with its
  changes, issues and pull requests named and codename in the event's data.
- The header toolbar: prev and next, the title, and the views year (``multiMonthYear``), month (``dayGridMonth``),
  week (``dayGridWeek``) and list (``listMonth``).
- A date is picked by clicking a day (FullCalendar's ``dateClick``, from the interaction plugin) or its number
  (``navLinks``): the calendar opens that day's releases in the list view (``listDay``).
- A click on an event opens a Bootstrap 4 popover (the theme's ``bootstrap.bundle`` with Popper) with the release's
  date, changes, issues and pull requests, codename, and a link to its milestone in the tracker where the tracker
  has that page; the button in its header closes it, and opening another closes the one open.

Nothing depends on the clock: the calendar opens on the month of the newest release and ``now`` is that release's
date (FullCalendar highlights it as "today"), in UTC and the locale ``en``, weeks starting on Sunday.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from urllib.parse import quote

from capreplay.benchmark.apps.sbadmin_figures import Row, newest_first, version_key
from capreplay.benchmark.apps.sbadmin_pages import COLOURS, HEX, replace_once

FULLCALENDAR = "fullcalendar@6.1.22"
VENDOR = {"fullcalendar": (FULLCALENDAR, "")}
"""``vendor/NAME`` -> the npm package and its folder served there."""
SCRIPTS = (
    "vendor/fullcalendar/index.global.min.js",
    "js/demo/pallets-calendar.js",
    "js/demo/calendar-releases-demo.js",
)
"""What the calendar page loads, in order, after the theme's scripts."""
PAGE = "calendar.html"
TRACKER = "http://tracker.bench.test/milestone/"
TRACKER_MILESTONES = frozenset({
    "click 7.0", "click 8.0.0", "click 8.1.7", "flask 0.1", "flask 1.0", "flask 2.0.0", "flask 3.0.0",
    "itsdangerous 2.0.0", "jinja2 2.9", "jinja2 3.0.0", "jinja2 3.1.0", "markupsafe 2.0.0", "werkzeug 0.5",
    "werkzeug 0.9.7", "werkzeug 2.0.0", "werkzeug 3.0.1",
})  # fmt: skip
"""The tracker's milestones (``<PyPI name> <version>``) whose pages the tracker's plan captures: a popover links only
to these, so no link on the frozen dashboard leads off the snapshot (a test compares them with the plan)."""

NAV_ITEM = """
            <!-- Nav Item - Calendar -->
            <li class="nav-item{active}">
                <a class="nav-link" href="calendar.html">
                    <i class="fas fa-fw fa-calendar-alt"></i>
                    <span>Calendar</span></a>
            </li>
"""
_TABLES_ITEM = r'(<!-- Nav Item - Tables -->\s*<li class="nav-item(?: active)?">.*?</li>\n)'

CARD = """
                    <!-- Page Heading -->
                    <h1 class="h3 mb-2 text-gray-800">Release Calendar</h1>
                    <p class="mb-4">Every release of the six Pallets projects on the day it came out, coloured by
                        project. Switch between the year, month, week and list views in the calendar's header; click
                        a day to list its releases, and click a release to see its changes.</p>

                    <div class="card shadow mb-4">
                        <div class="card-header py-3">
                            <h6 class="m-0 font-weight-bold text-primary">Every Release of the Pallets Projects
                                ({count})</h6>
                        </div>
                        <div class="card-body">
                            <div id="releaseCalendar"></div>
                            <hr>
                            <div class="small">{legend}
                            </div>
                        </div>
                    </div>
"""

CALENDAR_SCRIPT = r"""// Every Pallets release on FullCalendar: click a day to list it, a release for its popover.
var releasePopover = null;

// The popover's header: the release and the button that closes it.
function popoverTitle(event) {
  var title = document.createElement("span");
  title.textContent = event.title;
  var close = document.createElement("button");
  close.type = "button";
  close.className = "close ml-3";
  close.setAttribute("aria-label", "Close");
  close.setAttribute("data-release-close", "");
  close.innerHTML = '<span aria-hidden="true">&times;</span>';
  var header = document.createElement("div");
  header.className = "d-flex align-items-center justify-content-between";
  header.appendChild(title);
  header.appendChild(close);
  return header;
}

// The popover's body: the release's date, changes, issues and pull requests, codename and tracker milestone.
function popoverBody(event) {
  var release = event.extendedProps;
  var body = document.createElement("div");
  body.setAttribute("data-release", event.title);
  var lines = [
    "Released " + release.date,
    release.changes + (release.changes === 1 ? " change" : " changes"),
    release.references + (release.references === 1 ? " issue or pull request named" : " issues and pull requests named")
  ];
  if (release.codename) {
    lines.push("Codename: " + release.codename);
  }
  lines.forEach(function(text) {
    var line = document.createElement("div");
    line.textContent = text;
    body.appendChild(line);
  });
  if (release.milestone) {
    var link = document.createElement("a");
    link.href = release.milestone;
    link.className = "d-block mt-2";
    link.textContent = "Milestone in the tracker";
    body.appendChild(link);
  }
  return body;
}

function closeReleasePopover() {
  if (releasePopover) {
    $(releasePopover).popover("dispose");
    releasePopover = null;
  }
}

function openReleasePopover(element, event) {
  closeReleasePopover();
  $(element).popover({
    trigger: "manual",
    html: true,
    placement: "auto",
    container: "body",
    title: popoverTitle(event),
    content: popoverBody(event)
  });
  $(element).popover("show");
  releasePopover = element;
}

$(document).on("click", "[data-release-close]", closeReleasePopover);

var releaseCalendar = new FullCalendar.Calendar(document.getElementById("releaseCalendar"), {
  timeZone: "UTC",
  locale: "en",
  firstDay: 0,
  initialView: "dayGridMonth",
  initialDate: PALLETS_CALENDAR.initialDate,
  now: PALLETS_CALENDAR.initialDate,
  height: "auto",
  headerToolbar: {
    left: "prev,next",
    center: "title",
    right: "multiMonthYear,dayGridMonth,dayGridWeek,listMonth"
  },
  buttonText: {
    year: "year",
    month: "month",
    week: "week",
    list: "list"
  },
  navLinks: true,
  navLinkDayClick: "listDay",
  dateClick: function(info) {
    releaseCalendar.changeView("listDay", info.dateStr);
  },
  eventDisplay: "block",
  eventOrder: "title",
  displayEventTime: false,
  noEventsText: "No releases",
  events: PALLETS_CALENDAR.events,
  eventDidMount: function(info) {
    info.el.setAttribute("data-release", info.event.title);
  },
  eventWillUnmount: function(info) {
    if (releasePopover === info.el) {
      closeReleasePopover();
    }
  },
  eventClick: function(info) {
    info.jsEvent.preventDefault();
    if (releasePopover === info.el) {
      closeReleasePopover();
    } else {
      openReleasePopover(info.el, info.event);
    }
  }
});
releaseCalendar.render();
"""


def milestone_url(row: Row) -> str | None:
    """The tracker's page of ``row``'s milestone, if the tracker's capture holds it."""
    name = f"{row.project.lower()} {row.version}"
    return TRACKER + quote(name) if name in TRACKER_MILESTONES else None


def calendar_events(rows: Iterable[Row], projects: list[str]) -> list[dict[str, object]]:
    """One all-day event per release, oldest first (a day's releases by project, then version), in the colour of
    its project (``projects``: display names in the order of :data:`COLOURS`)."""
    colours = {p: HEX[c] for p, c in zip(projects, COLOURS, strict=False)}
    listed = sorted(rows, key=lambda r: (r.released, projects.index(r.project), version_key(r.version)))
    return [{"title": r.title, "start": r.released.isoformat(), "allDay": True,
             "backgroundColor": colours[r.project], "borderColor": colours[r.project],
             "extendedProps": {"project": r.project, "version": r.version, "date": r.released.isoformat(),
                               "changes": r.changes, "references": r.references, "codename": r.codename,
                               "milestone": milestone_url(r)}}
            for r in listed]  # fmt: skip


def calendar_data(rows: Iterable[Row], projects: list[str]) -> str:
    """``js/demo/pallets-calendar.js``: the events and the date the calendar opens on (the newest release's) as
    one global, ``PALLETS_CALENDAR``."""
    listed = list(rows)
    initial = newest_first(listed)[0].released.isoformat()
    events = ",\n".join(f"    {json.dumps(e, ensure_ascii=False)}" for e in calendar_events(listed, projects))
    head = f'var PALLETS_CALENDAR = {{\n  "initialDate": "{initial}",\n  "events": [\n'
    return ("// Every release of the Pallets projects, from their CHANGES.rst when the dashboard was built.\n"
            f"{head}{events}\n  ]\n}};\n")  # fmt: skip


def with_calendar_link(html: str, *, active: bool = False) -> str:
    """A page of the dashboard layout with the sidebar's "Calendar" item after "Tables"."""
    item = NAV_ITEM.format(active=" active" if active else "")
    return replace_once(html, _TABLES_ITEM, lambda m: m[1] + item, literal=False)


def calendar_page(blank: str, rows: list[Row], projects: list[str]) -> str:
    """``calendar.html``: the theme's blank page (with its topbar and footer filled) made the calendar's page: its
    sidebar marks "Calendar", not "Blank Page", and its content is the calendar's card."""
    html = replace_once(blank, "<title>SB Admin 2 - Blank</title>", "<title>SB Admin 2 - Calendar</title>")
    pages_item = (
        r'<li class="nav-item active">(\s*<a class=")nav-link(" href="#" data-toggle="collapse"'
        r' data-target="#collapsePages")'
    )
    html = replace_once(
        html, pages_item, lambda m: f'<li class="nav-item">{m[1]}nav-link collapsed{m[2]}', literal=False
    )
    html = replace_once(
        html, '<div id="collapsePages" class="collapse show"', '<div id="collapsePages" class="collapse"'
    )
    html = replace_once(
        html, '<a class="collapse-item active" href="blank.html">', '<a class="collapse-item" href="blank.html">'
    )
    html = with_calendar_link(html, active=True)
    legend = "".join(_LEGEND_ITEM.format(colour=colour, name=escape(name))
                     for name, colour in zip(projects, COLOURS, strict=False))  # fmt: skip
    card = CARD.format(count=len(rows), legend=legend)
    heading = (
        r'(<div class="container-fluid">\s*)<!-- Page Heading -->\s*<h1 class="h3 mb-4 text-gray-800">Blank Page</h1>'
        r"\s*(</div>)"
    )
    html = replace_once(
        html, heading, lambda m: m[1].rstrip(" ") + card.lstrip("\n") + "\n" + " " * 16 + m[2], literal=False
    )
    custom = '<script src="js/sb-admin-2.min.js"></script>'
    scripts = "".join(f'\n    <script src="{src}"></script>' for src in SCRIPTS)
    return replace_once(html, custom, custom + "\n\n    <!-- Page level plugins and custom scripts -->" + scripts)


_LEGEND_ITEM = """
                                <span class="mr-2 text-nowrap">
                                    <i class="fas fa-circle text-{colour}"></i> {name}
                                </span>"""
