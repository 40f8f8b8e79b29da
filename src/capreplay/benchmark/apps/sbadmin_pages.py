"""SB Admin 2's shipped pages and demo scripts with their demo figures replaced by real ones. Pure: text in, text out.

Each edit names the exact text of the pinned release (4.1.4) it replaces and fails if that text is not there
exactly once, so a different release cannot be half-filled silently. Everything else (markup, classes,
scripts) stays as shipped. The figures come from :mod:`capreplay.benchmark.apps.sbadmin_figures`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from capreplay.benchmark.apps.sbadmin_figures import Row, Summary, percent, version_key
from capreplay.errors import CapreplayError

NUNITO_WEIGHTS = ("200", "300", "400", "400-italic", "600", "700", "800", "900")
"""The Nunito styles the shipped Google Fonts link asked for that the theme's CSS uses."""
COLOURS = ("primary", "success", "info", "warning", "danger", "secondary")
"""The theme's colour names, one per project, in the order of the projects."""
HEX = {"primary": "#4e73df", "success": "#1cc88a", "info": "#36b9cc", "warning": "#f6c23e",
       "danger": "#e74a3b", "secondary": "#858796"}  # fmt: skip
"""The theme's colours (``scss/_variables.scss``)."""
HOVER_HEX = {"primary": "#2e59d9", "success": "#17a673", "info": "#2c9faf", "warning": "#f4b619",
             "danger": "#e02d1b", "secondary": "#717384"}  # fmt: skip
"""Their hover shades: the theme's buttons' ``:hover`` backgrounds (the demo's donut uses the first three)."""
AVATARS = ("img/undraw_profile_1.svg", "img/undraw_profile_2.svg", "img/undraw_profile_3.svg",
           "img/undraw_profile.svg")  # fmt: skip
USER = "Pallets"
FOOTER = "Release history from the CHANGES.rst of the Pallets projects' source releases"


def replace_once(text: str, pattern: str, new: str | Callable[[re.Match[str]], str], *, literal: bool = True) -> str:
    """``text`` with the one match of ``pattern`` (literal text, or a DOTALL regex) replaced by ``new``, taken as
    it is (no backslash escapes) or made from the match."""
    regex = re.compile(re.escape(pattern) if literal else pattern, re.DOTALL)
    found = len(regex.findall(text))
    if found != 1:
        raise CapreplayError(f"SB Admin 2's page has {found} matches for {pattern[:60]!r}, expected exactly 1")
    return regex.sub(new if callable(new) else lambda _: new, text)


def between(new: str) -> Callable[[re.Match[str]], str]:
    """A replacement that keeps the match's first and last groups around ``new``."""
    return lambda m: m[1] + new + m[m.re.groups]


@dataclass(frozen=True)
class Card:
    """One of the four cards of the first row: its label and value (the third card also draws a bar)."""

    label: str
    value: str


def fonts(html: str) -> str:
    """The Google Fonts link replaced by the Nunito styles of ``@fontsource/nunito`` served from ``fonts/``."""
    links = "\n    ".join(f'<link href="fonts/nunito/{w}.css" rel="stylesheet">' for w in NUNITO_WEIGHTS)
    return replace_once(html, r'<link\s+href="https://fonts\.googleapis\.com/css\?family=Nunito:[^"]*"\s+rel="stylesheet">',
                        links, literal=False)  # fmt: skip


def chrome(html: str, latest: list[Row]) -> str:
    """The topbar's alerts (the three newest releases), messages (the first change of each of the four newest),
    user and the footer, on a page of the dashboard layout."""
    html = fonts(html)
    alerts = "".join(_alert(row, colour) for row, colour in zip(latest[:3], COLOURS, strict=False))
    html = replace_once(html, r"Alerts Center(\s*</h6>).*?(<a [^>]*>)Show All Alerts</a>",
                        lambda m: f"Latest Releases{m[1]}{alerts}\n{_MORE}Show all releases</a>",
                        literal=False)  # fmt: skip
    messages = "".join(_message(row, avatar) for row, avatar in zip(latest[:4], AVATARS, strict=False))
    html = replace_once(html, r"Message Center(\s*</h6>).*?(<a [^>]*>)Read More Messages</a>",
                        lambda m: f"Latest Changes{m[1]}{messages}\n{_MORE}Show every release</a>",
                        literal=False)  # fmt: skip
    counter = '<span class="badge badge-danger badge-counter">'
    html = replace_once(html, f"{counter}3+</span>", f"{counter}{len(latest[:3])}</span>")
    html = replace_once(html, f"{counter}7</span>", f"{counter}{len(latest[:4])}</span>")
    html = replace_once(html, "Douglas McGee</span>", f"{USER}</span>")
    return replace_once(html, r"Copyright &copy; Your Website \d{4}", FOOTER, literal=False)


_MORE = '<a class="dropdown-item text-center small text-gray-500" href="tables.html">'


def _alert(row: Row, colour: str) -> str:
    plural = "" if row.changes == 1 else "s"
    return f"""
<a class="dropdown-item d-flex align-items-center" href="tables.html">
    <div class="mr-3">
        <div class="icon-circle bg-{colour}">
            <i class="fas fa-tag text-white"></i>
        </div>
    </div>
    <div>
        <div class="small text-gray-500">{_long_date(row)}</div>
        <span class="font-weight-bold">{escape(row.title)} released with {row.changes} change{plural}</span>
    </div>
</a>"""


def _message(row: Row, avatar: str) -> str:
    return f"""
<a class="dropdown-item d-flex align-items-center" href="tables.html">
    <div class="dropdown-list-image mr-3">
        <img class="rounded-circle" src="{avatar}" alt="...">
        <div class="status-indicator bg-success"></div>
    </div>
    <div>
        <div class="text-truncate">{escape(row.first_change)}</div>
        <div class="small text-gray-500">{escape(row.title)} · {row.released.isoformat()}</div>
    </div>
</a>"""


def _long_date(row: Row) -> str:
    return f"{row.released:%B} {row.released.day}, {row.released.year}"


def cards(html: str, first: Card, second: Card, third: Card, share: int, fourth: Card) -> str:
    """The four demo cards (Earnings monthly and annual, Tasks with its bar at ``share`` %, Pending Requests)."""
    html = replace_once(html, "Earnings (Monthly)</div>", f"{escape(first.label)}</div>")
    html = replace_once(html, ">$40,000<", f">{escape(first.value)}<")
    html = replace_once(html, "Earnings (Annual)</div>", f"{escape(second.label)}</div>")
    html = replace_once(html, ">$215,000<", f">{escape(second.value)}<")
    html = replace_once(html, r">Tasks(\s*</div>)", lambda m: f">{escape(third.label)}{m[1]}", literal=False)
    html = replace_once(html, ">50%<", f">{escape(third.value)}<")
    html = replace_once(
        html, 'style="width: 50%" aria-valuenow="50"', f'style="width: {share}%" aria-valuenow="{share}"'
    )
    html = replace_once(html, "Pending Requests</div>", f"{escape(fourth.label)}</div>")
    html = replace_once(html, ">18<", f">{escape(fourth.value)}<")
    # the money and chat icons of the demo's cards would mislabel counts of changes and a release
    html = replace_once(
        html,
        '<i class="fas fa-dollar-sign fa-2x text-gray-300"></i>',
        '<i class="fas fa-list-ul fa-2x text-gray-300"></i>',
    )
    return replace_once(
        html, '<i class="fas fa-comments fa-2x text-gray-300"></i>', '<i class="fas fa-tag fa-2x text-gray-300"></i>'
    )


def index_page(html: str, top: Summary, by_project: list[tuple[str, int]], fixes: list[tuple[str, int]]) -> str:
    """``index.html``: cards, releases per year, changes by project and the share of fixes per project."""
    html = cards(html, Card("Releases (all projects)", f"{top.releases:,}"), Card("Changes listed", f"{top.changes:,}"),
                 Card("Releases with a codename", f"{percent(top.codenamed, top.releases)}%"),
                 percent(top.codenamed, top.releases),
                 Card(f"Latest release · {top.latest.released.isoformat()}", top.latest.title))  # fmt: skip
    html = replace_once(html, ">Earnings Overview</h6>", ">Releases per Year (all projects)</h6>")
    html = replace_once(html, ">Revenue Sources</h6>", ">Changes by Project</h6>")
    total = sum(n for _, n in by_project)
    legend = "".join(f"""
<span class="mr-2 text-nowrap">
    <i class="fas fa-circle text-{colour}"></i> {escape(name)} {percent(n, total)}%
</span>""" for (name, n), colour in zip(by_project, COLOURS, strict=False))  # fmt: skip
    html = replace_once(html, r'(<div class="mt-4 text-center small">).*?(\s*</div>)', between(legend),
                        literal=False)  # fmt: skip
    html = replace_once(html, ">Projects</h6>", ">Fixes per Project (share of its changes)</h6>")
    bars = "".join(_progress(name, share, colour, last=n == len(fixes) - 1)
                   for n, ((name, share), colour) in enumerate(zip(fixes, COLOURS, strict=False)))  # fmt: skip
    card = (
        r'(share of its changes\)</h6>\s*</div>\s*<div class="card-body">).*?(\s*</div>\s*</div>\s*<!-- Color System)'
    )
    return replace_once(html, card, between(bars), literal=False)


def _progress(name: str, share: int, colour: str, *, last: bool) -> str:
    return f"""
<h4 class="small font-weight-bold">{escape(name)} <span class="float-right">{share}%</span></h4>
<div class="progress{"" if last else " mb-4"}">
    <div class="progress-bar bg-{colour}" role="progressbar" style="width: {share}%"
        aria-valuenow="{share}" aria-valuemin="0" aria-valuemax="100"></div>
</div>"""


def cards_page(html: str, top: Summary) -> str:
    """``cards.html``: its four demo cards with other totals."""
    fixes = percent(top.fixes, top.changes)
    return cards(html, Card("Projects", str(top.projects)), Card("Issues & PRs referenced", f"{top.references:,}"),
                 Card("Changes that are fixes", f"{fixes}%"), fixes,
                 Card(f"First release · {top.first.released.isoformat()}", top.first.title))  # fmt: skip


def charts_page(html: str, flask_major: str) -> str:
    """``charts.html``: the card titles say what each chart counts; the data script is loaded."""
    html = replace_once(html, ">Area Chart</h6>", ">Area Chart: Releases per Year (all projects)</h6>")
    html = replace_once(html, ">Bar Chart</h6>", f">Bar Chart: Changes per Flask {flask_major}.x Release</h6>")
    html = replace_once(html, ">Donut Chart</h6>", ">Donut Chart: Changes by Project</h6>")
    return with_data_script(html)


def with_data_script(html: str) -> str:
    """The page loads ``js/demo/pallets-data.js`` before the demo scripts that read it."""
    return replace_once(
        html,
        "<!-- Page level custom scripts -->",
        '<!-- Page level custom scripts -->\n    <script src="js/demo/pallets-data.js"></script>',
    )


COLUMNS = ("Project", "Version", "Released", "Codename", "Changes", "Issues & PRs")


def tables_page(html: str, rows: list[Row]) -> str:
    """``tables.html``: the DataTables demo table holds every release, one row each."""
    html = replace_once(html, ">DataTables Example</h6>", f">Every Release of the Pallets Projects ({len(rows)})</h6>")
    heads = "".join(f"\n                                            <th>{c}</th>" for c in COLUMNS)
    head_pattern = r"(<tr>)\s*<th>Name</th>.*?<th>Salary</th>(\s*</tr>)"
    html = replace_once(html, r"(<thead>\s*)" + head_pattern, lambda m: m[1] + m[2] + heads + m[3], literal=False)
    html = replace_once(html, r"(<tfoot>\s*)" + head_pattern, lambda m: m[1] + m[2] + heads + m[3], literal=False)
    body = "".join(_table_row(r) for r in rows)
    return replace_once(html, r"(<tbody>).*?(\s*</tbody>)", between(body), literal=False)


def _table_row(row: Row) -> str:
    cells = [f"<td>{escape(row.project)}</td>",
             f'<td data-order="{version_key(row.version)}">{escape(row.version)}</td>',
             f"<td>{row.released.isoformat()}</td>",
             f"<td>{escape(row.codename or '')}</td>",
             f"<td>{row.changes}</td>",
             f"<td>{row.references}</td>"]  # fmt: skip
    inner = "".join(f"\n                                            {c}" for c in cells)
    return f"\n                                        <tr>{inner}\n                                        </tr>"


def data_script(per_year: tuple[list[str], list[int]], by_project: list[tuple[str, int]],
                flask_changes: list[tuple[str, int]]) -> str:  # fmt: skip
    """``js/demo/pallets-data.js``: the charts' figures as one global, ``PALLETS``."""
    data = {
        "releasesPerYear": {"labels": per_year[0], "data": per_year[1]},
        "changesByProject": {
            "labels": [name for name, _ in by_project],
            "data": [n for _, n in by_project],
            "colors": [HEX[c] for c in COLOURS[: len(by_project)]],
            "hoverColors": [HOVER_HEX[c] for c in COLOURS[: len(by_project)]],
        },
        "flaskChanges": {"labels": [v for v, _ in flask_changes], "data": [n for _, n in flask_changes]},
    }
    members = ",\n".join(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in data.items())
    return ("// The Pallets projects' release history, counted from their CHANGES.rst when the dashboard was built.\n"
            f"var PALLETS = {{\n{members}\n}};\n")  # fmt: skip


def area_script(js: str) -> str:
    """``chart-area-demo.js`` drawing releases per year."""
    js = replace_once(
        js,
        'labels: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],',
        "labels: PALLETS.releasesPerYear.labels,",
    )
    js = replace_once(js, 'label: "Earnings",', 'label: "Releases",')
    js = replace_once(
        js,
        "data: [0, 10000, 5000, 15000, 10000, 20000, 15000, 25000, 20000, 30000, 25000, 40000],",
        "data: PALLETS.releasesPerYear.data,",
    )
    return _no_dollars(js)


def bar_script(js: str) -> str:
    """``chart-bar-demo.js`` drawing the changes of each Flask release of one major version, every bar labelled."""
    js = replace_once(
        js, 'labels: ["January", "February", "March", "April", "May", "June"],', "labels: PALLETS.flaskChanges.labels,"
    )
    js = replace_once(js, 'label: "Revenue",', 'label: "Changes",')
    js = replace_once(js, "data: [4215, 5312, 6251, 7841, 9821, 14984],", "data: PALLETS.flaskChanges.data,")
    js = replace_once(js, "max: 15000,", "suggestedMax: 10,")
    js = replace_once(js, "maxTicksLimit: 6", "maxTicksLimit: PALLETS.flaskChanges.labels.length")
    return _no_dollars(js)


def pie_script(js: str) -> str:
    """``chart-pie-demo.js`` drawing the changes of each project."""
    js = replace_once(js, 'labels: ["Direct", "Referral", "Social"],', "labels: PALLETS.changesByProject.labels,")
    js = replace_once(js, "data: [55, 30, 15],", "data: PALLETS.changesByProject.data,")
    js = replace_once(
        js, "backgroundColor: ['#4e73df', '#1cc88a', '#36b9cc'],", "backgroundColor: PALLETS.changesByProject.colors,"
    )
    return replace_once(
        js,
        "hoverBackgroundColor: ['#2e59d9', '#17a673', '#2c9faf'],",
        "hoverBackgroundColor: PALLETS.changesByProject.hoverColors,",
    )


def _no_dollars(js: str) -> str:
    """The demo's money formatting dropped: these charts count releases and changes."""
    js = replace_once(js, "// Include a dollar sign in the ticks", "// Counts: no unit in the ticks")
    js = replace_once(js, "return '$' + number_format(value);", "return number_format(value);")
    return replace_once(
        js,
        "datasetLabel + ': $' + number_format(tooltipItem.yLabel)",
        "datasetLabel + ': ' + number_format(tooltipItem.yLabel)",
    )
