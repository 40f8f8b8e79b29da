"""The study on real pages other tools captured: ``capreplay study selftest -o DIR`` (the self-test, and the
views ``study views`` writes, from one load per page) on webrecorder.net (ArchiveWeb.page, 2022),
www.google.co.uk (pywb, 2018), kiwix.org/en/ (Browsertrix, 2024) and www.iana.org (pywb, 2014), with the
tasks of ``tests/study/real_pages/tasks.json``.

The four captures are imported into one snapshot by the real ``capreplay import`` in a subprocess. They are
test data of other projects, read from ``../shared/interop/`` and never copied into this repository; without
them the tests skip, naming the missing file. Every expected value below was read off the pages by hand
(their screenshots, HTML and text), not taken from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.support.cli import cli
from tests.support.paths import ROOT
from tests.support.pywb import INTEROP

pytestmark = pytest.mark.browser  # selftest, views and the location measure load the pages in Chromium

TASKS = ROOT / "tests" / "study" / "real_pages" / "tasks.json"
CAPTURES = [
    "webrecorder+replayweb.page/mkdocs/site/docs/examples/example.wacz",
    "servo+servo-warc-tests/collections/GoogleUK/archive/rec-20181019023222666572-goller.warc.gz",
    "openzim+warc2zim/tests/data/kiwix-with-redirects.warc.gz",
    "webrecorder+pywb/sample_archive/warcs/iana.warc.gz",
]
PAGES = {  # page id: URL, in the order of the tasks file
    "webrecorder": "https://webrecorder.net/",
    "google_uk": "https://www.google.co.uk/",
    "kiwix": "https://kiwix.org/en/",
    "iana": "http://www.iana.org/",
}
REPRESENTATIONS = ["raw_html", "markdown", "accessibility_tree", "screenshot", "indexed_dom", "aria_ai",
                   "stagehand_snapshot"]
ACT_TASKS = 18
READ_TASKS = 18
ABOVE_THE_FOLD = {
    # ACT targets whose box meets the 1280x800 viewport, from the screenshots: the nav link and the logo of
    # webrecorder.net, all of Google's home page (it is 800 px tall), kiwix's header and banner controls, and
    # iana.org's search box and panel heading (its footer starts at about 790 px; the links are below 800).
    "webrecorder.act.1", "webrecorder.act.4",
    "google_uk.act.1", "google_uk.act.2", "google_uk.act.3", "google_uk.act.4", "google_uk.act.5",
    "kiwix.act.1", "kiwix.act.2", "kiwix.act.3",
    "iana.act.1", "iana.act.3",
}  # fmt: skip
GUESSES = {
    # Targets the Markdown does not carry (it drops <input> elements) whose guess, the text a person sees on
    # them, still finds them on the live page: Google's "Google Search" button and iana.org's search box,
    # named by its placeholder. A guess may hit; the self-test checks only that they are not representable.
    ("google_uk.act.2", "markdown"): {"text": "Google Search"},
    ("iana.act.1", "markdown"): {"text": "Search the site..."},
}


def capture(name: str) -> Path:
    """The interop file ``name``; the test skips, naming it, where it is absent."""
    path = INTEROP / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (a capture the real-page study tasks run on)")
    return path


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four captures imported into one snapshot, with exactly the four main pages."""
    files = [str(capture(name)) for name in CAPTURES]
    out = tmp_path_factory.mktemp("real_pages") / "snapshot"
    pages = [arg for url in PAGES.values() for arg in ("--page", url)]
    done = cli("import", *files, "-o", str(out), *pages)
    assert done.returncode == 0, done.stderr
    assert " 4 pages from " in done.stdout, done.stdout
    return out


@pytest.fixture(scope="module")
def selftest_and_views(snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    """Exit status and JSON report of ``capreplay study selftest --json -o DIR`` on the snapshot, and DIR: the
    self-test and the views of ``study views -o DIR`` from the same page loads."""
    out = tmp_path_factory.mktemp("real_views") / "views"
    done = cli("study", "selftest", "--snapshot", str(snapshot), "--tasks", str(TASKS), "--json", "-o", str(out),
               timeout=600)  # fmt: skip
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout), out


@pytest.fixture(scope="module")
def selftest(selftest_and_views: tuple[int, dict[str, Any], Path]) -> tuple[int, dict[str, Any]]:
    """Exit status and JSON report of the self-test."""
    status, report, _ = selftest_and_views
    return status, report


@pytest.fixture(scope="module")
def views(selftest_and_views: tuple[int, dict[str, Any], Path]) -> Path:
    """The folder the views were written into."""
    _, report, out = selftest_and_views
    assert report["page_failures"] == []  # every page was read and written (the checks are the self-test's)
    return out


def test_tasks_file_covers_the_four_pages() -> None:
    doc = json.loads(TASKS.read_text())
    assert {p["id"]: p["url"] for p in doc["pages"]} == PAGES
    kinds = [t["kind"] for t in doc["tasks"]]
    assert (kinds.count("ACT"), kinds.count("READ")) == (ACT_TASKS, READ_TASKS)
    assert all(t.get("location") for t in doc["tasks"]), "run `capreplay study measure` on the snapshot"
    assert all(t.get("measured") for t in doc["tasks"] if t["kind"] == "ACT"), "run `capreplay study measure`"
    where = {t["id"]: t["location"] for t in doc["tasks"]}
    # Drawn by form controls, both in the screenshot above the fold: a button's value, an empty box's placeholder.
    assert where["google_uk.read.1"] == where["iana.read.3"] == "above_fold"
    assert where["google_uk.read.2"] == "attribute_only"  # the search box's maxlength, shown nowhere
    # Counts worked out from the page have no one place (a "5" is wherever a digit 5 is).
    assert [t for t, tag in where.items() if tag == "derived"] == ["webrecorder.read.5", "kiwix.read.5", "iana.read.4"]


def test_selftest_passes_every_pair(selftest: tuple[int, dict[str, Any]]) -> None:
    status, report = selftest
    assert report["page_failures"] == []
    assert (status, report["failures"]) == (0, 0)
    perfect = {(c["task"], c["representation"]): c for c in report["checks"] if c["check"] == "perfect"}
    for pair, answer in GUESSES.items():
        assert perfect[pair]["answer"] == answer and perfect[pair]["expected_correct"] is None, pair
        assert perfect[pair]["verdict"]["correct"] is True and perfect[pair]["verdict"]["representable"] is False
    summary = {row["representation"]: row for row in report["summary"]}
    assert list(summary) == REPRESENTATIONS
    for name, row in summary.items():
        assert (row["act_pairs"], row["read_pairs"], row["read_failed"]) == (ACT_TASKS, READ_TASKS, 0), name
    # No iframe or shadow root holds a target: raw HTML reaches every one of them.
    assert summary["raw_html"]["act_representable"] == ACT_TASKS
    checks = report["checks"]
    assert sum(c["check"] == "other_target" for c in checks) == ACT_TASKS * len(REPRESENTATIONS)
    assert sum(c["check"] == "wrong_answer" for c in checks) == READ_TASKS * len(REPRESENTATIONS)
    assert all(not c["verdict"]["correct"] for c in checks if c["check"] in ("other_target", "wrong_answer"))
    assert all(c["verdict"]["correct"] for c in checks if c["check"] == "gold")


def test_selftest_sees_the_pages_as_they_are(selftest: tuple[int, dict[str, Any]]) -> None:
    _, report = selftest
    perfect = {(c["task"], c["representation"]): c for c in report["checks"] if c["check"] == "perfect"}
    screenshot = {task for (task, rep), c in perfect.items() if rep == "screenshot" and c["verdict"]["representable"]}
    assert screenshot == ABOVE_THE_FOLD
    # webrecorder.net's "Read More" is an <a> without href: no link role, so no node of its own in the ARIA tree.
    assert perfect["webrecorder.act.2", "accessibility_tree"]["verdict"]["representable"] is False
    # The round logo (an <img> without alt) and Google's grid icon (a title only) have no text in the Markdown.
    assert perfect["webrecorder.act.4", "markdown"]["verdict"]["representable"] is False
    assert perfect["google_uk.act.3", "markdown"]["verdict"]["representable"] is False
    # Texts that occur more than once: the French prisons post is the second of three with a visible "Read
    # More" (each post's second copy is display:none); "Time Zone Database" is in a panel, then in the footer.
    assert perfect["kiwix.act.4", "markdown"]["answer"] == {"text": "Read More", "occurrence": 2}
    assert perfect["iana.act.2", "markdown"]["answer"] == {"text": "Time Zone Database", "occurrence": 2}
    assert perfect["iana.act.3", "accessibility_tree"]["answer"] == {
        "role": "link",
        "name": "Number Resources",
        "occurrence": 1,
    }
    for task in ("kiwix.act.4", "iana.act.2"):
        assert perfect[task, "markdown"]["verdict"]["correct"] is True, task
    # Google's "I'm Feeling Lucky" is an <input value=...>: in the viewport and the ARIA tree, not in the Markdown.
    lucky = {
        rep: perfect_read(report, "google_uk.read.1", rep) for rep in ("screenshot", "accessibility_tree", "markdown")
    }
    assert lucky == {"screenshot": True, "accessibility_tree": True, "markdown": False}


def perfect_read(report: dict[str, Any], task: str, representation: str) -> bool | None:
    """Whether the self-test found ``task``'s gold answer in ``representation``."""
    (check,) = [c for c in report["checks"]
                if (c["task"], c["representation"], c["check"]) == (task, representation, "gold")]  # fmt: skip
    representable: bool | None = check["verdict"]["representable"]
    return representable


def test_views_write_every_page_and_representation(views: Path) -> None:
    out = views
    assert sorted(p.name for p in out.iterdir()) == sorted([*PAGES, "tokens.json"])
    rows = json.loads((out / "tokens.json").read_text())["rows"]
    assert len(rows) == len(PAGES) * len(REPRESENTATIONS)
    assert [(r["page"], r["representation"]) for r in rows] == [(p, r) for p in PAGES for r in REPRESENTATIONS]
    for page, url in PAGES.items():
        folder = out / page
        assert {p.name for p in folder.iterdir()} == {
            *(f"{r}.txt" for r in REPRESENTATIONS if r != "screenshot"),
            "screenshot.png",
            "indexed_dom.agent_default.audit_only.txt",
            "page.json",
        }, page
        assert Image.open(folder / "screenshot.png").size == (1280, 800), page
        assert json.loads((folder / "page.json").read_text())["url"] == url


def test_views_show_what_the_pages_say(views: Path) -> None:
    out = views

    def view(page: str, name: str) -> str:
        return (out / page / name).read_text()

    markdown = view("webrecorder", "markdown.txt")
    assert "Web archiving for all!" in markdown and "info@webrecorder.net" in markdown
    assert "Webrecorder receives $1.3M open source development grant" in markdown
    assert "212" in view("kiwix", "markdown.txt") and "Countries and Territories" in view("kiwix", "markdown.txt")
    assert "CC-BY-SA" in view("kiwix", "markdown.txt")
    assert "In November 2013 ICANN invited customers" in " ".join(view("iana", "markdown.txt").split())
    assert "[Advertising](" in view("google_uk", "markdown.txt")
    assert 'maxlength="2048"' in view("google_uk", "raw_html.txt")
    assert "Feeling Lucky" not in view("google_uk", "markdown.txt")  # Markdown drops <input> elements
    assert 'button "I\'m Feeling Lucky"' in view("google_uk", "accessibility_tree.txt")
    assert 'textbox "Search the site..."' in view("iana", "accessibility_tree.txt")
    # kiwix.org opens a newsletter pop-up a few seconds after it has loaded; its page settles 6 s (settle_ms),
    # so every view of its session shows the pop-up, and its AI-mode snapshot cannot change mid-session.
    assert "Is new content available for download?" in view("kiwix", "aria_ai.txt")


def test_committed_locations_and_records_are_the_measured_ones(snapshot: Path) -> None:
    done = cli("study", "measure", "--snapshot", str(snapshot), "--tasks", str(TASKS), "--check", timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
