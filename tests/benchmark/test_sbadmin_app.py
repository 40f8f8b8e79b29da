"""The dashboard's figures and table, counted by hand from excerpts of the real Click and Werkzeug changelogs."""

from __future__ import annotations

from datetime import date

import pytest

from capreplay.benchmark.apps import sbadmin_pages as pages, sbadmin_timeline as timeline
from capreplay.benchmark.apps.sbadmin_figures import (
    Point,
    Row,
    changes_per_release,
    fix_share,
    newest_first,
    percent,
    release_timeline,
    releases_per_year,
    rows_of,
    summary,
    version_key,
    year_fraction,
)
from capreplay.benchmark.changelog import parse_changelog
from capreplay.errors import CapreplayError

CLICK = """\
.. currentmodule:: click

Version 8.1.7
-------------

Released 2023-08-17

-   Fix issue with regex flags in shell completion. :issue:`2581`
-   Bash version detection issues a warning instead of an error. :issue:`2574`
-   Fix issue with completion script for Fish shell. :issue:`2567`


Version 8.1.6
-------------

Released 2023-07-18

-   Fix an issue with type hints for ``@click.group()``. :issue:`2558`


Version 8.1.5
-------------

Released 2023-07-13

-   Fix an issue with type hints for ``@click.command()``, ``@click.option()``, and
    other decorators. Introduce typing tests. :issue:`2558`
"""

WERKZEUG = """\
Version 0.9.7
-------------

(bugfix release, release date to be decided)

- Fix unicode problems in ``werkzeug.debug.tbtools``.


Version 0.1
-----------

Released on Dec 9th 2007, codename Wictorinoxger.

- Initial release
"""


@pytest.fixture
def rows() -> list[Row]:
    return rows_of("click", parse_changelog(CLICK)) + rows_of("werkzeug", parse_changelog(WERKZEUG))


def test_dated_releases_become_rows(rows: list[Row]) -> None:
    assert rows == [
        Row("Click", "8.1.7", date(2023, 8, 17), None, 3, 2, 3,
            "Fix issue with regex flags in shell completion. :issue:`2581`"),
        Row("Click", "8.1.6", date(2023, 7, 18), None, 1, 1, 1,
            "Fix an issue with type hints for ``@click.group()``. :issue:`2558`"),
        Row("Click", "8.1.5", date(2023, 7, 13), None, 1, 1, 1,
            "Fix an issue with type hints for ``@click.command()``, ``@click.option()``, and other decorators. "
            "Introduce typing tests. :issue:`2558`"),
        Row("Werkzeug", "0.1", date(2007, 12, 9), "Wictorinoxger", 1, 0, 0, "Initial release"),
    ]  # fmt: skip


def test_figures(rows: list[Row]) -> None:
    labels, counts = releases_per_year(rows)
    assert labels == [str(y) for y in range(2007, 2024)]
    assert counts == [1] + [0] * 15 + [3]
    assert [r.title for r in newest_first(rows)] == ["Click 8.1.7", "Click 8.1.6", "Click 8.1.5", "Werkzeug 0.1"]
    assert changes_per_release(rows, "Click", "8") == [("8.1.5", 1), ("8.1.6", 1), ("8.1.7", 3)]
    assert fix_share(rows, ["Click", "Werkzeug", "Flask"]) == [("Click", 80), ("Werkzeug", 0), ("Flask", 0)]
    top = summary(rows)
    assert (top.projects, top.releases, top.changes, top.references, top.codenamed, top.fixes) == (2, 4, 6, 5, 1, 4)
    assert (top.latest.title, top.first.title) == ("Click 8.1.7", "Werkzeug 0.1")


def test_versions_sort_as_numbers_and_percent_rounds_half_up() -> None:
    assert sorted(["10.0", "2.0.1", "2.0.0", "2.0.0rc1"], key=version_key) == ["2.0.0rc1", "2.0.0", "2.0.1", "10.0"]
    assert (percent(1, 3), percent(1, 8), percent(0, 0)) == (33, 13, 0)


def test_table_rows_replace_the_demo_rows(rows: list[Row]) -> None:
    shipped = """<h6 class="m-0 font-weight-bold text-primary">DataTables Example</h6>
<table><thead>
    <tr>
        <th>Name</th>
        <th>Salary</th>
    </tr>
</thead><tfoot>
    <tr>
        <th>Name</th>
        <th>Salary</th>
    </tr>
</tfoot><tbody>
    <tr><td>Tiger Nixon</td><td>$320,800</td></tr>
</tbody></table>"""
    html = pages.tables_page(shipped, rows)
    assert "Every Release of the Pallets Projects (4)" in html
    assert "Tiger Nixon" not in html and "Salary" not in html
    assert html.count("<th>Issues & PRs</th>") == 2
    assert '<td data-order="0008.0001.0007.0000z">8.1.7</td>' in html
    assert "<td>Wictorinoxger</td>" in html


def test_an_edit_that_does_not_match_exactly_once_fails() -> None:
    with pytest.raises(CapreplayError, match="0 matches"):
        pages.replace_once("<p>Earnings</p>", "Revenue", "Changes")
    with pytest.raises(CapreplayError, match="2 matches"):
        pages.replace_once("$1 $2", "$", "")


def test_the_timeline_has_every_release_of_each_project_oldest_first(rows: list[Row]) -> None:
    assert (year_fraction(date(2019, 1, 1)), year_fraction(date(2019, 7, 2)), year_fraction(date(2020, 12, 31))) == (
        2019.0,
        2019.4986,
        2020.9973,
    )
    same_day = [*rows, Row("Click", "8.1.5rc1", date(2023, 7, 13), None, 2, 0, 0, "")]
    assert release_timeline(same_day, ["Click", "Werkzeug", "Flask"]) == [
        ("Click", [Point(2023.5288, 2, "8.1.5rc1", date(2023, 7, 13)), Point(2023.5288, 1, "8.1.5", date(2023, 7, 13)),
                   Point(2023.5425, 1, "8.1.6", date(2023, 7, 18)), Point(2023.6247, 3, "8.1.7", date(2023, 8, 17))]),
        ("Werkzeug", [Point(2007.937, 1, "0.1", date(2007, 12, 9))]),
        ("Flask", []),
    ]  # fmt: skip


def test_the_timeline_script_gives_each_project_its_colour_and_the_axis_whole_years(rows: list[Row]) -> None:
    script = timeline.timeline_script(release_timeline(rows, ["Click", "Werkzeug"]))
    assert script.startswith("// Every release")
    assert '"first": 2007,\n  "last": 2024,' in script
    assert ('{"label": "Click", "color": "#4e73df", "data": [{"x": 2023.5288, "y": 1, "v": "8.1.5", "d": "2023-07-13"}'
            in script)  # fmt: skip
    werkzeug = (
        '{"label": "Werkzeug", "color": "#1cc88a", "data": [{"x": 2007.937, "y": 1, "v": "0.1", "d": "2007-12-09"}]}'
    )
    assert werkzeug in script


def test_the_timeline_card_goes_under_the_charts_and_its_scripts_before_the_theme_s() -> None:
    shipped = """<div class="container-fluid">
                    <div class="row">
                        <div class="col-xl-4 col-lg-5">
                            <canvas id="myPieChart"></canvas>
                        </div>
                    </div>

                </div>
                <!-- /.container-fluid -->
    <script src="vendor/chart.js/Chart.min.js"></script>

    <!-- Page level custom scripts -->
    <script src="js/demo/chart-area-demo.js"></script>"""
    html = timeline.timeline_card(shipped)
    assert html.index('id="myPieChart"') < html.index('id="myReleaseChart"') < html.index("<!-- /.container-fluid -->")
    assert html.count('<div class="row">') == 2
    scripts = [line.strip() for line in html.splitlines() if line.strip().startswith("<script")]
    assert scripts == [
        '<script src="vendor/chart.js/Chart.min.js"></script>',
        '<script src="vendor/hammerjs/hammer.min.js"></script>',
        '<script src="vendor/chartjs-plugin-zoom/chartjs-plugin-zoom.min.js"></script>',
        '<script src="js/demo/pallets-releases.js"></script>',
        '<script src="js/demo/chart-releases-demo.js"></script>',
        '<script src="js/demo/chart-area-demo.js"></script>',
    ]
    assert 'id="releasePanMode"' in html and 'id="releaseResetZoom"' in html
    # the plugin is taken back from every chart before the theme's charts are made, and given to the timeline
    script = timeline.CHART_SCRIPT
    assert script.index("Chart.plugins.unregister(ChartZoom);") < script.index("new Chart(")
    assert "plugins: [ChartZoom]" in timeline.CHART_SCRIPT
