"""The viewer's study pages, without a browser: a study run folder written by hand (so every figure on its pages
is known in advance) and the committed offline study results, read by the viewer's real assembly, and each page
checked for what it must show. The drawing of where an ACT answer landed is checked against boxes worked out by
hand from the layout (device pixel ratio 2, scrolled 50 px down).
"""

from __future__ import annotations

import io
import json
import re
import shutil
from datetime import UTC, datetime
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from capreplay.models.geometry import Box, Layout
from capreplay.report.study import report_folder, write_run_report
from capreplay.study.records import (
    ActGeometry,
    CallTokens,
    CallVerdict,
    Cell,
    RunInfo,
    RunRecord,
    TaskIndex,
    TaskInfo,
)
from capreplay.view.act_overlay import act_overlay, fits, png_size
from capreplay.view.assemble import ViewInputs, assemble
from capreplay.view.markdown_tables import markdown_html
from capreplay.view.site import Site
from tests.support.paths import ROOT
from tests.support.study_run import REGISTRATION, registered_results

WHEN = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LAYOUT = Layout(inner_width=400, inner_height=300, device_pixel_ratio=2.0, scroll_x=0.0, scroll_y=50.0)
"""The screenshot's layout: 800x600 pixels, the page scrolled 50 CSS pixels down."""
TARGET = Box(x=100, y=150, width=40, height=20)
"""In the screenshot: (200, 200), 80x40."""
OTHER = Box(x=10, y=70, width=30, height=10)
"""In the screenshot: (20, 40), 60x20."""
BELOW = Box(x=50, y=900, width=30, height=10)
"""In the screenshot: (100, 1700), 700 px below its 600 px."""
SHOT = "screenshots/00112233aabbccdd.png"
RUN = "synthetic"
BASE = f"studies/{RUN}"


def cell(task: str, representation: str, repeat: int = 0) -> Cell:
    return Cell(repeat=repeat, page="login", task=task, representation=representation)  # type: ignore[arg-type]


def record(c: Cell, answer: dict[str, Any] | None, verdict: CallVerdict | None, **more: Any) -> RunRecord:
    return RunRecord(cell=c, request_sha256="ab" * 32, started_at=WHEN, latency_s=0.25, answer=answer,
                     answer_text=None if answer is None else "Here:\n" + json.dumps(answer), model="fake-model",
                     verdict=verdict,
                     **more)  # fmt: skip


def geometry(**placed: Any) -> ActGeometry:
    return ActGeometry(layout=LAYOUT, target_box=TARGET, **placed)


PLANNED = [cell("login.read.1", "screenshot"), cell("login.read.1", "accessibility_tree"),
           cell("login.act.1", "screenshot"), cell("login.act.1", "accessibility_tree"),
           cell("login.act.2", "screenshot"), cell("login.act.2", "accessibility_tree")]  # fmt: skip
RECORDS = [
    record(PLANNED[0], {"answer": "Sunday 22 March"},
           CallVerdict(correct=True, reason="correct", representable=True, screenshot=SHOT)),
    record(PLANNED[1], {"answer": "Monday"}, CallVerdict(correct=False, reason="wrong_answer", representable=True,
                                                          detail="'Monday' is not 'Sunday 22 March'", screenshot=SHOT)),
    # a click above and left of the target
    record(PLANNED[2], {"x": 10, "y": 60}, CallVerdict(correct=False, reason="wrong_element", representable=True,
                                                        screenshot=SHOT, geometry=geometry(point=(10.0, 60.0)))),
    # the answer resolved to another element
    record(PLANNED[3], {"role": "button", "name": "Help"},
           CallVerdict(correct=False, reason="wrong_element", representable=True, screenshot=SHOT,
                       geometry=geometry(resolved_box=OTHER))),
    # a call that failed: no answer, the target still drawn; its screenshot name points out of the run folder
    record(PLANNED[4], None, CallVerdict(correct=False, reason="error", detail="scripted outage",
                                         screenshot="screenshots/../../secret.png", geometry=geometry()),
           error_kind="api_status", error="scripted outage"),
]  # fmt: skip
"""The last planned cell (login.act.2 on the accessibility tree) is not recorded."""
TASKS = TaskIndex(tasks=[TaskInfo(id="login.read.1", page="login", kind="READ", location="above_fold"),
                         TaskInfo(id="login.act.1", page="login", kind="ACT", location="above_fold"),
                         TaskInfo(id="login.act.2", page="login", kind="ACT", location="attribute_only")])  # fmt: skip


def png(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (240, 240, 240)).save(out, format="PNG")
    return out.getvalue()


def write_run(results: Path, records: list[RunRecord], run_id: str = RUN, registration: str | None = REGISTRATION,
              lines: list[str] | None = None) -> Path:  # fmt: skip
    folder = results / "runs" / run_id
    (folder / "screenshots").mkdir(parents=True)
    info = RunInfo(run_id=run_id, registration=registration, created_at=WHEN, seed=7, repeats=1,
                   representations=["screenshot", "accessibility_tree"],
                   model_settings={"provider": "anthropic", "model": "fake-model", "max_tokens": 64},
                   planned=PLANNED)  # fmt: skip
    (folder / "run.json").write_text(info.model_dump_json())
    (folder / "task_index.json").write_text(TASKS.model_dump_json())
    (folder / "calls.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records)
                                        + "".join(line + "\n" for line in lines or []))  # fmt: skip
    tokens = [CallTokens(cell=r.cell, method="image_rule" if r.cell.representation == "screenshot" else "o200k_base",
                         offline=1334 if r.cell.representation == "screenshot" else 450, o200k_full=600,
                         o200k_empty=150) for r in records]  # fmt: skip
    (folder / "tokens.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tokens))
    (folder / SHOT).write_bytes(png((800, 600)))
    return folder


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A registered results folder (of a copy of tasks.json) with the hand-written run and the offline results."""
    results = registered_results(tmp_path)
    write_run(results, RECORDS)
    (tmp_path / "secret.png").write_bytes(png((10, 10)))
    shutil.copytree(ROOT / "results" / "study-offline", results / "study-offline")
    return results


def text(site: Site, path: str) -> str:
    entry = site.get(path)
    assert entry is not None, f"no page {path}"
    return entry.body().decode("utf-8")


def visible(html: str) -> str:
    """The page's text without tags, whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def links(path: str, html: str) -> list[str]:
    """Every relative href and src of a page, as site paths."""
    found = re.findall(r'(?:href|src)="([^"#:]+)"', html)
    base = path.rsplit("/", 1)[0] if "/" in path else ""
    out = []
    for target in found:
        parts = (base.split("/") if base else []) + target.split("/")
        resolved: list[str] = []
        for part in parts:
            if part == "..":
                resolved.pop()
            elif part not in (".", ""):
                resolved.append(part)
        out.append("/".join(resolved))
    return out


def test_every_link_of_every_study_page_leads_into_the_site(results: Path) -> None:
    site = assemble(ViewInputs(results))
    pages = [p for p in site.paths() if p.endswith(".html")]
    assert f"{BASE}/index.html" in pages and "offline/study-offline/index.html" in pages
    assert len([p for p in pages if p.startswith(f"{BASE}/calls/")]) == len(RECORDS)
    for path in pages:
        for target in links(path, text(site, path)):
            assert target in site, f"{path} links to {target}, which the site lacks"
    # The screenshot a verdict names from outside the run's folder is not served.
    assert [p for p in site.paths() if p.endswith(".png") and "screenshots" in p] == [f"{BASE}/{SHOT}"]


def test_the_front_page_lists_the_run_and_the_offline_results(results: Path) -> None:
    site = assemble(ViewInputs(results))
    front = visible(text(site, "index.html"))
    assert f"{RUN} 5/6 calls screenshot, accessibility_tree 5/6" in front
    checks = json.loads((ROOT / "results" / "study-offline" / "selftest.json").read_text())["checks"]
    assert f"all {len(checks)} checks as expected" in front


def test_the_run_page_shows_the_reports_figures_and_every_call(results: Path) -> None:
    site = assemble(ViewInputs(results))
    html = text(site, f"{BASE}/index.html")
    page = visible(html)
    # screenshot: READ 1 of 1, ACT 0 of 2; the accessibility tree: READ 0 of 1, ACT 0 of 1; Wilson 95% for 1/1
    # is [0.21, 1.00] and for 0/2 [0.00, 0.66] (Newcombe 1998, method 3)
    assert "screenshot 3 1.00 1/1 [0.21, 1.00] 0.00 0/2 [0.00, 0.66] 1,334" in page
    assert "accessibility_tree 2 0.00 0/1 [0.00, 0.79] 0.00 0/1 [0.00, 0.79] 450" in page
    assert "Questions are not shown" not in page
    assert "On which day is scheduled maintenance planned?" in page  # from the registered tasks file
    # one mark per recorded call, linking to it, and one for the planned cell never recorded
    marks = re.findall(r'<a class="mark (\w+)" href="([^"]+)"', html)
    assert sorted(kind for kind, _ in marks) == ["bad", "bad", "bad", "ok", "warn"]
    assert html.count('title="planned, not recorded"') == 1
    # the plots are the ones `capreplay study report` writes
    written = write_run_report(results.parent / "report", report_folder(results / "runs" / RUN))
    for name in ("tokens_vs_accuracy.png", "tokens_per_page.png"):
        entry = site.get(f"{BASE}/{name}")
        assert entry is not None and entry.body() == next(p for p in written if p.name == name).read_bytes()


def svg_of(html: str) -> str:
    found = re.search(r"<svg [^>]*class=\"act-overlay\".*?</svg>", html)
    assert found, "no drawing on the page"
    return found.group(0)


def test_a_click_is_drawn_where_the_screenshot_shows_it(results: Path) -> None:
    site = assemble(ViewInputs(results))
    html = text(site, f"{BASE}/calls/0/login.act.1/screenshot.html")
    assert "The screenshot the model was shown" in html and f'src="../../../{SHOT}"' in html
    svg = svg_of(html)
    assert 'viewBox="0 0 800 600"' in svg
    # the target's box: (100, 150) CSS px, scrolled 50 down, at twice the pixels
    assert '<rect x="200.0" y="200.0" width="80.0" height="40.0" fill="#1f7a3d"' in svg
    # the click (10, 60): red, for the verdict is wrong
    assert '<g stroke="#b42318"' in svg and '<circle cx="20.0" cy="20.0"' in svg
    assert "wrong_element" in visible(html) and "Show the password" not in html


def test_the_element_an_answer_resolved_to_is_drawn_on_the_pages_screenshot(results: Path) -> None:
    site = assemble(ViewInputs(results))
    html = text(site, f"{BASE}/calls/0/login.act.1/accessibility_tree.html")
    assert "The page's screenshot" in html and "Type your email address into the email field." in html
    svg = svg_of(html)
    assert '<rect x="20.0" y="40.0" width="60.0" height="20.0" fill="#b42318"' in svg and "stroke-dasharray" in svg
    assert "<circle" not in svg


def test_a_failed_call_shows_its_error_and_no_screenshot_from_outside_the_run(results: Path) -> None:
    site = assemble(ViewInputs(results))
    page = visible(text(site, f"{BASE}/calls/0/login.act.2/screenshot.html"))
    assert "call failed scripted outage (api_status)" in page
    assert "This run kept no screenshot" in page


def test_a_run_recorded_before_screenshots_were_kept_still_reads(tmp_path: Path) -> None:
    results = tmp_path / "results"
    old = [json.loads(r.model_dump_json()) for r in RECORDS[:3]]
    for line in old:
        del line["verdict"]["screenshot"], line["verdict"]["geometry"]
    write_run(results, [], run_id="old", registration=None, lines=[json.dumps(line) for line in old])
    site = assemble(ViewInputs(results))
    assert "Questions are not shown: the run names no registration." in visible(text(site, "studies/old/index.html"))
    page = visible(text(site, "studies/old/calls/0/login.act.1/screenshot.html"))
    assert "This run kept no screenshot of the page session" in page


def test_a_box_outside_the_screenshot_gets_a_marker_and_a_sentence() -> None:
    overlay = act_overlay((800, 600), geometry(resolved_box=BELOW), correct=False, resolved_expected=True)
    assert overlay.notes == ["The answer is 1,100 px below the screenshot."]
    assert "<polygon" in overlay.svg and "answer 1,100 px below the screenshot" in overlay.svg
    assert act_overlay((800, 600), geometry(resolved_box=TARGET), correct=True, resolved_expected=True).notes == [
        "The answer resolved to the target itself."]
    outside = act_overlay((800, 600), geometry(point=(900.0, 10.0)), correct=False, resolved_expected=False)
    assert outside.notes == ["The click point (1800, -80) is outside the 800x600 screenshot."]


def test_a_screenshot_of_another_size_than_its_layout_is_not_drawn_on() -> None:
    head = png((800, 600))[:24]
    assert png_size(head) == (800, 600) and png_size(b"GIF89a" + bytes(18)) is None
    assert fits(LAYOUT, (800, 600)) and not fits(LAYOUT, (400, 300))


def test_the_offline_results_show_a_failed_check_and_the_tables(results: Path) -> None:
    offline = results / "study-offline"
    doc = json.loads((offline / "selftest.json").read_text())
    flipped = next(c for c in doc["checks"] if c["check"] == "gold" and c["representation"] == "markdown")
    flipped["verdict"] = {"correct": False, "reason": "wrong_answer", "detail": "scripted for the test",
                          "representable": True}  # fmt: skip
    doc["page_failures"] = [{"page": "table", "url": "https://www.study.test/table", "error": "did not load"}]
    (offline / "selftest.json").write_text(json.dumps(doc))
    site = assemble(ViewInputs(results))
    front = visible(text(site, "index.html"))
    assert f"1 of {len(doc['checks'])} checks failed 1 page not checked the file counts 0 failures" in front
    html = text(site, "offline/study-offline/index.html")
    failures = html[html.index("<h2>Self-test failures</h2>"):html.index("<h2>Self-test by representation</h2>")]
    assert visible(failures).count("FAILED") == 1
    assert (f"FAILED {flipped['page']} {flipped['task']} markdown gold" in visible(failures)
            and "scripted for the test" in failures and "did not load" in failures)  # fmt: skip
    # every table of the Markdown files, as tables: the tokens' total row among them
    total = next(line for line in (offline / "tokens.md").read_text().splitlines() if line.startswith("| total"))
    cells = [c.strip() for c in total.strip("|").split("|")]
    assert "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>" in html
    md_tables = sum(line.startswith("|---") for name in ("tokens.md", "coverage.md", "timings.md")
                    for line in (offline / name).read_text().splitlines())  # fmt: skip
    assert md_tables == 4
    assert html.count("<table") == md_tables + 4  # the failures, the pages not checked, the summary, every check


def test_a_selftest_file_that_is_not_one_is_listed_with_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "offline"
    folder.mkdir(parents=True)
    (folder / "selftest.json").write_text('{"checks": 3}')
    site = assemble(ViewInputs(tmp_path / "results"))
    front = visible(text(site, "index.html"))
    assert "unreadable" in front and "not a self-test's selftest.json: checks: Input should be a valid array" in front


def test_markdown_tables_are_tables_and_nothing_in_them_is_markup() -> None:
    html = markdown_html("# Title\n\nSome `code` <b>here</b>.\n\n| a | b |\n|---|---|\n| <script>x</script> | 2 |\n")
    assert html == ("<h2>Title</h2><p>Some <code>code</code> &lt;b&gt;here&lt;/b&gt;.</p>"
                    '<table class="numbers"><thead><tr><th>a</th><th>b</th></tr></thead><tbody>'
                    "<tr><td>&lt;script&gt;x&lt;/script&gt;</td><td>2</td></tr></tbody></table>")  # fmt: skip
