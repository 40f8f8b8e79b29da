"""The offline study's results page: the self-test's outcome with every failed check in full, its figures per
representation, the token, coverage and timing tables written beside it, and every check. Pure: what was read
in, HTML out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from capreplay.view.html import badge, definitions, esc, page, table
from capreplay.view.markdown_tables import markdown_html
from capreplay.view.selftest_file import OfflineCheck, SelftestFile


@dataclass(frozen=True)
class OfflineView:
    """An offline results folder as the viewer read it."""

    path: str
    folder: str
    selftest: SelftestFile
    tables: dict[str, str]
    """The Markdown of each table file, by file name."""
    status: str
    """The self-test's outcome as HTML badges."""


def _expected(c: OfflineCheck) -> str:
    outcome = {True: "correct", False: "incorrect", None: "either"}[c.expected_correct]
    if c.expected_representable is not None:
        outcome += ", representable" if c.expected_representable else ", not representable"
    return esc(outcome)


def _got(c: OfflineCheck) -> str:
    v = c.verdict
    representable = {True: "representable", False: "not representable", None: "representability not decided"}
    return (badge("correct", "ok") if v.correct else badge(v.reason or "incorrect", "bad")) + (
        f" <span class=small>{esc(representable[v.representable])}</span>")


def _answer(c: OfflineCheck) -> str:
    return f"<code>{esc(json.dumps(c.answer, ensure_ascii=False))}</code>"


def _checks(checks: Sequence[OfflineCheck], *, cls: str) -> str:
    rows = [[badge("passed", "ok") if c.passed else badge("FAILED", "bad"), esc(c.page), esc(c.task),
             esc(c.representation), esc(c.check), _answer(c), _expected(c), _got(c), esc(c.verdict.detail or "")]
            for c in checks]  # fmt: skip
    return table(["", "page", "task", "representation", "check", "answer", "expected", "got", "detail"], rows,
                 cls=cls)


def _failures(view: OfflineView) -> str:
    s = view.selftest
    failed = [c for c in s.checks if not c.passed]
    parts = ["<h2>Self-test failures</h2>"]
    if failed:
        checks = f"{len(failed)} check" + ("s" if len(failed) > 1 else "")
        parts.append(f"<p>{badge(checks, 'bad')} did not score as the measured records say they must: resolution or "
                     "scoring disagrees with ground truth there.</p>"
                     + _checks(failed, cls="failures"))  # fmt: skip
    else:
        parts.append(f"<p>{badge('none', 'ok')} Every one of the {len(s.checks)} checks scored as expected.</p>")
    if s.page_failures:
        rows = [[esc(f.page), esc(f.url), esc(f.error)] for f in s.page_failures]
        parts.append("<p>Pages the self-test could not check:</p>" + table(["page", "URL", "why"], rows,
                                                                              cls="failures"))
    return "".join(parts)


def _summary(view: OfflineView) -> str:
    rows = [[esc(r.representation), str(r.act_pairs), str(r.act_representable),
             badge(str(r.act_failed), "bad") if r.act_failed else "0", str(r.read_pairs), str(r.read_present),
             badge(str(r.read_failed), "bad") if r.read_failed else "0"] for r in view.selftest.summary]  # fmt: skip
    if not rows:
        return ""
    return ("<h2>Self-test by representation</h2>"
            + table(["representation", "ACT tasks", "targets representable", "ACT tasks failed", "READ tasks",
                     "answers present", "READ tasks failed"], rows, cls="numbers"))  # fmt: skip


def render_offline(view: OfflineView) -> str:
    """The results page."""
    s = view.selftest
    facts = definitions([
        ("self-test", view.status),
        ("folder", f"<code>{esc(view.folder)}</code>"),
        ("snapshot", esc(s.snapshot or "–")),
        ("tasks", esc(s.tasks or "–")),
        ("checks", esc(f"{len(s.checks)} on {len({c.page for c in s.checks})} pages, "
                       f"{len({c.representation for c in s.checks})} representations")),
    ])  # fmt: skip
    tables = "".join(f'<section class=md-file><p class=small>{esc(name)}</p>{markdown_html(text)}</section>'
                     for name, text in view.tables.items())  # fmt: skip
    every = (f"<h2>Every check ({len(s.checks)})</h2><details><summary>show all checks</summary>"
             + _checks(s.checks, cls="checks") + "</details>")  # fmt: skip
    body = facts + _failures(view) + _summary(view) + tables + every
    return page(view.path, f"Offline study results: {view.folder}", body)
