"""Review sheets in the viewer, over real HTTP: the page shows what the sheet shows, a decision posted from it is
written into the file (and ``capreplay tasks accept`` takes the result), and a decision that fails a check, a
form made on bytes that have since changed, or a request for a sheet the viewer does not list writes nothing.

The sheet is a real one: tests/support/view_sheet.py writes a batch of three world tasks and the sheet
``capreplay tasks review`` writes of it, with the world snapshot's captures as the proof run's screenshots.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from capreplay.tasks.review import accept_sheet
from capreplay.view.assemble import ViewInputs, assemble
from capreplay.view.serving import ViewServer
from capreplay.view.static_export import export_site
from tests.support.paths import ROOT
from tests.support.view_sheet import GOLD_ANSWERS, MISSING_SHOT, REJECTED, SHEET_TASKS, make_review_sheet

PAGE = "sheets/wf-view/index.html"
DECIDE = "sheets/wf-view/decide"
JSON = {"Accept": "application/json"}


class Viewer:
    """``capreplay view`` on a results folder holding one review sheet, and a client for it."""

    def __init__(self, results: Path, sheet: Path, url: str, http: aiohttp.ClientSession) -> None:
        self.results, self.sheet, self.url, self.http = results, sheet, url, http

    async def get(self, path: str) -> tuple[int, str]:
        async with self.http.get(self.url + path) as response:
            return response.status, await response.text()

    async def post(self, form: dict[str, str], headers: dict[str, str] | None = None,
                   name: str = "wf-view") -> tuple[int, dict[str, str], str]:  # fmt: skip
        url = f"{self.url}sheets/{name}/decide"
        async with self.http.post(url, data=form, headers=headers or {}, allow_redirects=False) as response:
            return response.status, dict(response.headers), await response.text()

    def form(self, task: str, verdict: str, reason: str = "", reviewer: str = "Ada Lindqvist") -> dict[str, str]:
        """The fields the page's form sends, with the sha256 of the file as it is now."""
        sha = hashlib.sha256(self.sheet.read_bytes()).hexdigest()
        return {"task": task, "verdict": verdict, "reason": reason, "reviewer": reviewer, "sha256": sha}


@pytest.fixture
async def viewer(tmp_path: Path) -> AsyncIterator[Viewer]:
    results = tmp_path / "results"
    sheet = make_review_sheet(results)
    (results / "notes.md").write_text("# Notes\n\nNot a review sheet.\n", encoding="utf-8")
    server = ViewServer(lambda: assemble(ViewInputs(results)))
    await server.start()
    try:
        async with aiohttp.ClientSession() as http:
            yield Viewer(results, sheet, server.url, http)
    finally:
        await server.stop()


def _section(html: str, task: str) -> str:
    start = html.index(f'<section class=task id="task-{task}"')
    return html[start : html.index("</section>", start)]


def _decision(text: str, task: str) -> list[str]:
    """The decision lines of the task's section of the sheet's text."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("## Task ") and line.endswith(f": {task}"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [line for line in lines[start:end] if line.startswith(("- [", "Reason:"))]


async def test_the_front_page_lists_the_sheet_and_passes_over_other_markdown(viewer: Viewer) -> None:
    broken = viewer.results / "old" / "review.md"
    broken.parent.mkdir()
    broken.write_text("<!-- capreplay review sheet 1 -->\n# nothing else\n", encoding="utf-8")
    status, html = await viewer.get("")
    assert status == 200
    listed = html[html.index("<h2>Review sheets") :]
    assert "Review sheets (2)" in listed
    assert f'<a href="{PAGE}">{viewer.sheet}</a>' in listed
    assert "0/3 decided" in listed
    assert f"{broken}: line 3: the sheet has no task section" in unescape(listed)
    assert "notes.md" not in html


async def test_the_page_shows_each_task_as_the_sheet_does_with_the_proof_runs_screenshots(viewer: Viewer) -> None:
    status, html = await viewer.get(PAGE)
    assert status == 200
    text = unescape(html)
    world = {t["id"]: t for t in json.loads((ROOT / "tasks.json").read_text(encoding="utf-8"))["workflows"]["tasks"]}
    run = viewer.sheet.parent / "proof-run"
    episodes = [json.loads(line) for line in (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    sha = hashlib.sha256(viewer.sheet.read_bytes()).hexdigest()
    for task_id in SHEET_TASKS:
        section = unescape(_section(html, task_id))
        assert world[task_id]["description"] in section
        for point in world[task_id]["covered_points"]:
            assert f"{point['id']}" in section and point["description"] in section
        for name, value in GOLD_ANSWERS[task_id].items():
            assert re.search(rf"<code>{re.escape(name)}</code>.*?<code>{re.escape(value)}</code>", section), name
        assert section.count("<tr><td>") >= len(world[task_id]["gold_path"])
        assert f'<input type=hidden name=sha256 value="{sha}">' in section
        assert '<input type=radio name=verdict value="" checked> undecided' in section
    assert "Slider: Range Selection" in text and "Chart: Data Point Hover" in text  # the taxonomy's names

    # every screenshot the page shows is the proof run's file, served through the site; the missing one says so
    shots = {step["screenshot"] for e in episodes for step in e["steps"] if step["screenshot"]}
    task, n = MISSING_SHOT
    missing = f"gold/0/{task}/step-{n:03d}.png"
    sources = set(re.findall(r'<img class=(?:thumb|page-shot) loading=lazy src="([^"]+)"', html))
    assert {s.removeprefix("proof-run/") for s in sources} == shots - {missing}
    for src in sorted(sources)[:3]:
        async with viewer.http.get(viewer.url + "sheets/wf-view/" + src) as response:
            assert response.status == 200 and response.content_type == "image/png"
            assert await response.read() == (viewer.sheet.parent / src).read_bytes()
    assert "no screenshot" in _section(html, task)
    for rejection in REJECTED:
        assert rejection["reason"] in text

    status, raw = await viewer.get("sheets/wf-view/sheet.txt")
    assert status == 200 and raw == viewer.sheet.read_text(encoding="utf-8")


async def test_a_posted_form_writes_the_decision_and_redirects_to_the_page(viewer: Viewer, tmp_path: Path) -> None:
    status, headers, _ = await viewer.post(viewer.form("budget-tent", "accept"))
    assert status == 303 and headers["Location"] == "index.html#decision-budget-tent"
    reason = "The hut calendar shows two prices for one night."
    status, headers, _ = await viewer.post(viewer.form("kell-hut-choice", "reject", reason))
    assert status == 303

    text = viewer.sheet.read_text(encoding="utf-8")
    assert "\nReviewer: Ada Lindqvist\n" in text
    assert _decision(text, "budget-tent") == ["- [x] accept", "- [ ] reject", "Reason:"]
    assert _decision(text, "kell-hut-choice") == ["- [ ] accept", "- [x] reject", f"Reason: {reason}"]
    assert _decision(text, "rain-tent") == ["- [ ] accept", "- [ ] reject", "Reason:"]
    # the file passes the checks of ``capreplay tasks accept``, which merges and logs it
    summary = accept_sheet(viewer.sheet, tmp_path / "bench.json")
    assert (summary.accepted, summary.rejected, summary.undecided) == (["budget-tent"], ["kell-hut-choice"],
                                                                      ["rain-tent"])  # fmt: skip

    _, html = await viewer.get(PAGE)
    assert "rejected</span> by Ada Lindqvist: <q>The hut calendar shows two prices for one night.</q>" in html
    assert "2/3 decided" in html
    assert '<input type=radio name=verdict value="accept" checked> accept' in _section(html, "budget-tent")


async def test_a_script_gets_json_with_the_new_sha256(viewer: Viewer) -> None:
    status, _, body = await viewer.post(viewer.form("rain-tent", "accept", "Both sites are needed."), JSON)
    answer = json.loads(body)
    assert status == 200 and answer["ok"] is True
    assert answer["sha256"] == hashlib.sha256(viewer.sheet.read_bytes()).hexdigest()
    assert (answer["task"], answer["verdict"], answer["reason"], answer["reviewer"]) == (
        "rain-tent", "accept", "Both sites are needed.", "Ada Lindqvist")  # fmt: skip
    assert "accepted" in answer["badge"] and "1/3 decided" in answer["decided"]
    # the next decision is made on the new bytes
    status, _, body = await viewer.post(viewer.form("budget-tent", "reject", "Too easy."), JSON)
    assert status == 200 and json.loads(body)["ok"] is True


@pytest.mark.parametrize(("task", "verdict", "reason", "reviewer", "message"), [
    ("rain-tent", "reject", "", "Ada", "task 'rain-tent': a reject needs a reason: say why the task should not be "
                                       "kept"),
    ("rain-tent", "", "Maybe.", "Ada", "task 'rain-tent': a reason but neither accept nor reject: choose one, or "
                                       "clear the reason to leave the task undecided"),
    ("rain-tent", "accept", "", "", "task 'rain-tent': no reviewer: write your name as the sheet's reviewer"),
])  # fmt: skip
async def test_a_decision_that_fails_a_check_is_refused_in_the_page_and_nothing_is_written(
        viewer: Viewer, task: str, verdict: str, reason: str, reviewer: str, message: str) -> None:  # fmt: skip
    before = viewer.sheet.read_bytes()
    status, _, html = await viewer.post(viewer.form(task, verdict, reason, reviewer))
    assert status == 422
    assert f'<p class="banner error" role=alert>Not saved: {message}' in unescape(html)
    section = _section(html, task)
    assert "decide-message error" in section and unescape(message) in unescape(section)
    assert f"<textarea name=reason rows=2>{reason}</textarea>" in section  # what was typed is kept
    status, _, body = await viewer.post(viewer.form(task, verdict, reason, reviewer), JSON)
    assert (status, json.loads(body)) == (422, {"ok": False, "status": 422, "error": message})
    assert viewer.sheet.read_bytes() == before


async def test_a_second_reviewer_and_a_batch_that_changed_are_refused(viewer: Viewer) -> None:
    assert (await viewer.post(viewer.form("budget-tent", "accept")))[0] == 303
    before = viewer.sheet.read_bytes()
    status, _, body = await viewer.post(viewer.form("rain-tent", "accept", reviewer="Bo Ekdahl"), JSON)
    assert status == 422 and json.loads(body)["error"].startswith("the sheet is signed by 'Ada Lindqvist'")

    # the batch's tasks file changed under the sheet: the sheet no longer matches its batch
    tasks = viewer.sheet.parent / "tasks.json"
    doc: dict[str, Any] = json.loads(tasks.read_text(encoding="utf-8"))
    doc["workflows"]["tasks"][1]["description"] += " Quickly."
    tasks.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    status, _, body = await viewer.post(viewer.form("rain-tent", "accept"), JSON)
    assert status == 422
    assert re.fullmatch(r"line \d+: task 'rain-tent' has changed since this sheet was written \(its sha256 is now "
                        r"[0-9a-f]{64}\); write a new sheet", json.loads(body)["error"])  # fmt: skip
    assert viewer.sheet.read_bytes() == before


async def test_a_sheet_edited_on_disk_since_the_page_was_made_is_not_written_over(viewer: Viewer) -> None:
    form = viewer.form("rain-tent", "accept")
    edited = viewer.sheet.read_text(encoding="utf-8").replace("Reviewer: \n", "Reviewer: Ada Lindqvist\n", 1)
    viewer.sheet.write_text(edited, encoding="utf-8")
    status, _, html = await viewer.post(form)
    assert status == 409
    assert "Not saved: the sheet changed on disk since this page was made" in unescape(html)
    new_sha = hashlib.sha256(edited.encode("utf-8")).hexdigest()
    assert f'<input type=hidden name=sha256 value="{new_sha}">' in html  # the page is of the file as it is now
    assert '<input type=radio name=verdict value="accept" checked>' in _section(html, "rain-tent")
    assert viewer.sheet.read_text(encoding="utf-8") == edited
    status, _, body = await viewer.post(form, JSON)
    assert status == 409 and json.loads(body)["ok"] is False


async def test_only_a_sheet_the_viewer_lists_is_written_and_only_from_its_own_pages(viewer: Viewer) -> None:
    before = viewer.sheet.read_bytes()
    form = viewer.form("budget-tent", "accept")
    for name in ("nope", "wf-view%2F..", "static"):
        assert (await viewer.post(form, name=name))[0] == 404, name
    assert (await viewer.post(form, name=".."))[0] == 405  # that is POST /decide, which no route takes
    status, _, body = await viewer.post(form, {"Origin": "http://evil.example"})
    assert (status, body) == (403, "decisions are taken only from the viewer's own pages\n")
    for bad, message in [({"verdict": "both"}, "the verdict is accept, reject or empty (undecided), not 'both'"),
                         ({"sha256": ""}, "the form does not carry the sheet's sha256: reload the page"),
                         ({"task": ""}, "the form names no task")]:  # fmt: skip
        status, _, body = await viewer.post(form | bad, JSON)
        assert (status, json.loads(body)["error"]) == (400, message)
    async with viewer.http.post(viewer.url + DECIDE, data=[*form.items(), ("verdict", "reject")],
                                headers=JSON) as response:  # fmt: skip
        assert response.status == 400 and (await response.json())["error"] == "the form sent 'verdict' 2 times"
    assert viewer.sheet.read_bytes() == before
    # the viewer writes nothing else: a GET of the route is not one
    assert (await viewer.get(DECIDE))[0] == 404


async def test_a_sheet_added_after_start_is_listed_on_the_next_front_page_and_can_be_decided(viewer: Viewer) -> None:
    other = make_review_sheet(viewer.results / "later", name="wf-later", tasks=("rain-tent",))
    assert (await viewer.post(viewer.form("rain-tent", "accept"), name="wf-later"))[0] == 404
    _, html = await viewer.get("")
    assert '<a href="sheets/wf-later/index.html">' in html
    sha = hashlib.sha256(other.read_bytes()).hexdigest()
    form = {"task": "rain-tent", "verdict": "accept", "reason": "", "reviewer": "Bo", "sha256": sha}
    assert (await viewer.post(form, name="wf-later"))[0] == 303
    assert _decision(other.read_text(encoding="utf-8"), "rain-tent")[0] == "- [x] accept"


def test_the_static_export_shows_the_decisions_with_a_note_on_how_to_decide(tmp_path: Path) -> None:
    results = tmp_path / "results"
    sheet = make_review_sheet(results)
    sheet.write_text(sheet.read_text(encoding="utf-8").replace("Reviewer: \n", "Reviewer: Ada\n", 1)
                     .replace("- [ ] accept", "- [x] accept", 1), encoding="utf-8")  # fmt: skip
    out = tmp_path / "site"
    export_site(assemble(ViewInputs(results)), out)
    html = (out / PAGE).read_text(encoding="utf-8")
    assert "<p class=static-note>This is an exported copy, opened from disk" in html
    assert "accepted</span> by Ada" in _section(html, "budget-tent")
    css = (out / "static/viewer.css").read_text(encoding="utf-8")
    assert "html.from-file form.decide { display: none; }" in css and "html.from-file .static-note" in css
    assert 'location.protocol === "file:"' in (out / "static/viewer.js").read_text(encoding="utf-8")
    for src in set(re.findall(r'src="(proof-run/[^"]+)"', html)):
        assert (out / "sheets/wf-view" / src).read_bytes() == (sheet.parent / src).read_bytes()
    assert (out / "sheets/wf-view/sheet.txt").read_bytes() == sheet.read_bytes()
