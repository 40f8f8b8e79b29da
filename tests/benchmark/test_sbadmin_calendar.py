"""The dashboard's release calendar: events, page and sidebar link, from excerpts of the real Click and Werkzeug
changelogs (the same ones as ``test_sbadmin_app.py``) and of SB Admin 2 4.1.4's shipped blank page."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

import pytest

from capreplay.benchmark.apps import sbadmin_calendar as calendar
from capreplay.benchmark.apps.sbadmin_figures import Row, rows_of
from capreplay.benchmark.changelog import parse_changelog
from tests.benchmark.test_sbadmin_app import CLICK, WERKZEUG

PROJECTS = ["Flask", "Click", "Jinja2", "Werkzeug", "MarkupSafe", "ItsDangerous"]
BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"

BLANK = """    <title>SB Admin 2 - Blank</title>
            <!-- Nav Item - Pages Collapse Menu -->
            <li class="nav-item active">
                <a class="nav-link" href="#" data-toggle="collapse" data-target="#collapsePages" aria-expanded="true"
                    aria-controls="collapsePages">
                    <i class="fas fa-fw fa-folder"></i>
                    <span>Pages</span>
                </a>
                <div id="collapsePages" class="collapse show" aria-labelledby="headingPages"
                    data-parent="#accordionSidebar">
                    <div class="bg-white py-2 collapse-inner rounded">
                        <a class="collapse-item active" href="blank.html">Blank Page</a>
                    </div>
                </div>
            </li>

            <!-- Nav Item - Tables -->
            <li class="nav-item">
                <a class="nav-link" href="tables.html">
                    <i class="fas fa-fw fa-table"></i>
                    <span>Tables</span></a>
            </li>

            <!-- Divider -->
                <div class="container-fluid">

                    <!-- Page Heading -->
                    <h1 class="h3 mb-4 text-gray-800">Blank Page</h1>

                </div>
    <!-- Custom scripts for all pages-->
    <script src="js/sb-admin-2.min.js"></script>

</body>"""


@pytest.fixture
def rows() -> list[Row]:
    return rows_of("click", parse_changelog(CLICK)) + rows_of("werkzeug", parse_changelog(WERKZEUG))


def test_every_release_is_an_all_day_event_in_its_project_s_colour_oldest_first(rows: list[Row]) -> None:
    events = calendar.calendar_events(rows, PROJECTS)
    assert [(e["title"], e["start"], e["backgroundColor"]) for e in events] == [
        ("Werkzeug 0.1", "2007-12-09", "#f6c23e"),
        ("Click 8.1.5", "2023-07-13", "#1cc88a"),
        ("Click 8.1.6", "2023-07-18", "#1cc88a"),
        ("Click 8.1.7", "2023-08-17", "#1cc88a"),
    ]
    assert events[0]["allDay"] is True
    assert events[0]["extendedProps"] == {"project": "Werkzeug", "version": "0.1", "date": "2007-12-09", "changes": 1,
                                          "references": 0, "codename": "Wictorinoxger", "milestone": None}  # fmt: skip
    # Click 8.1.7's milestone page is in the tracker's capture, so its popover links to it
    newest = events[-1]["extendedProps"]
    assert isinstance(newest, dict)
    assert newest["milestone"] == "http://tracker.bench.test/milestone/click%208.1.7"
    assert newest["changes"] == 3


def test_the_calendar_opens_on_the_newest_release_never_today(rows: list[Row]) -> None:
    script = calendar.calendar_data(rows, PROJECTS)
    assert script.startswith("// Every release")
    data = json.loads(script[script.index("{") : script.rindex("}") + 1])
    assert data["initialDate"] == "2023-08-17"
    assert len(data["events"]) == 4
    assert "now: PALLETS_CALENDAR.initialDate" in calendar.CALENDAR_SCRIPT
    assert 'timeZone: "UTC"' in calendar.CALENDAR_SCRIPT and 'locale: "en"' in calendar.CALENDAR_SCRIPT


def test_the_sidebar_gains_a_calendar_link_after_tables() -> None:
    html = calendar.with_calendar_link(BLANK)
    assert html.index('href="tables.html"') < html.index('href="calendar.html"') < html.index("<!-- Divider -->")
    assert '<li class="nav-item">\n                <a class="nav-link" href="calendar.html">' in html
    tables = '<li class="nav-item">\n                <a class="nav-link" href="tables.html">'
    active = calendar.with_calendar_link(BLANK.replace(tables, tables.replace("nav-item", "nav-item active")))
    assert active.count('href="calendar.html"') == 1


def test_the_calendar_page_is_the_blank_page_with_the_calendar_s_card(rows: list[Row]) -> None:
    html = calendar.calendar_page(BLANK, rows, PROJECTS)
    assert "<title>SB Admin 2 - Calendar</title>" in html
    assert "Blank Page</h1>" not in html and "collapse show" not in html and "collapse-item active" not in html
    assert '<li class="nav-item active">\n                <a class="nav-link" href="calendar.html">' in html
    assert '<a class="nav-link collapsed" href="#" data-toggle="collapse" data-target="#collapsePages"' in html
    assert "Every Release of the Pallets Projects\n                                (4)</h6>" in html
    assert html.index('<div id="releaseCalendar"></div>') < html.index("<!-- Custom scripts for all pages-->")
    scripts = [line.strip() for line in html.splitlines() if line.strip().startswith("<script")]
    assert scripts == [
        '<script src="js/sb-admin-2.min.js"></script>',
        '<script src="vendor/fullcalendar/index.global.min.js"></script>',
        '<script src="js/demo/pallets-calendar.js"></script>',
        '<script src="js/demo/calendar-releases-demo.js"></script>',
    ]


def test_popovers_link_only_to_milestones_the_tracker_s_plan_captures() -> None:
    plan = json.loads((BENCHMARK / "plans" / "tracker.json").read_text())
    captured = {unquote(p["url"].split("/milestone/", 1)[1]) for p in plan["pages"]
                if "/milestone/" in p["url"] and "?" not in p["url"]}  # fmt: skip
    assert captured == calendar.TRACKER_MILESTONES
