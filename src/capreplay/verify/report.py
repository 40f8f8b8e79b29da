"""Formatting verification results: the ``--json`` contract and a table for people. Pure."""

from __future__ import annotations

from typing import Any

from capreplay.verify.page_loads import PageReport
from capreplay.verify.threshold import MAX_PIXELS_CHANGED, MIN_TEXT_SIMILARITY, page_verdict
from capreplay.verify.websockets import connection_json, deviates


def page_json(report: PageReport) -> dict[str, Any]:
    """One page of ``verify --json``: url, status, requests, and the fidelity check where there is one."""
    out: dict[str, Any] = {
        "url": report.url,
        "status": report.status,
        "requests": [
            {"url": r.url, "method": r.method, "result": r.result, "rule": r.rule, "nearest": r.nearest,
             "archived": r.archived}
            for r in report.requests
        ],
    }
    if report.error:
        out["error"] = report.error
    if report.websockets:
        out["websockets"] = [connection_json(c) for c in report.websockets]
    if report.pixels is not None and report.text is not None:
        out["fidelity"] = {
            "pixel_identical": report.pixels.identical,
            "pixels_changed": round(report.pixels.changed_fraction, 6),
            "max_channel_delta": report.pixels.max_channel_delta,
            "text_identical": report.text.identical,
            "text_similarity": round(report.text.similarity, 6),
            "first_text_difference": report.text.first_difference,
        }
        verdict = page_verdict(report)
        if verdict is not None:
            out["fidelity"] |= {"passed": verdict.passed, "beyond_threshold": list(verdict.reasons)}
    return out


def fidelity_json(reports: list[PageReport]) -> dict[str, Any]:
    """The top-level fidelity keys of ``verify --json``: the limits, and how many pages went beyond them."""
    verdicts = [page_verdict(r) for r in reports]
    return {
        "fidelity_threshold": {"max_pixels_changed": MAX_PIXELS_CHANGED, "min_text_similarity": MIN_TEXT_SIMILARITY},
        "fidelity_compared": sum(v is not None for v in verdicts),
        "fidelity_failures": sum(v is not None and not v.passed for v in verdicts),
    }


def _fidelity(report: PageReport) -> str:
    if report.pixels is None or report.text is None:
        return "-"
    px = "pixels same" if report.pixels.identical else f"pixels {report.pixels.changed_fraction:.2%} differ"
    tx = "text same" if report.text.identical else f"text {report.text.similarity:.1%} alike"
    return f"{px}, {tx}"


def verify_table(reports: list[PageReport]) -> str:
    """A plain-text table: one row per page, then each miss with its nearest archived URL."""
    rows: list[tuple[str, ...]] = [("page", "status", "hit", "fuzzy", "miss", "blocked", "fidelity")]
    for r in reports:
        count = {k: sum(q.result == k for q in r.requests) for k in ("hit", "fuzzy", "miss", "blocked")}
        rows.append((r.url, r.status, *(str(count[k]) for k in ("hit", "fuzzy", "miss", "blocked")), _fidelity(r)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    for r in reports:
        if r.error:
            lines.append(f"failed  {r.url}: {r.error}")
        verdict = page_verdict(r)
        if verdict is not None and not verdict.passed:
            lines.append(f"differs {r.url}: {', '.join(verdict.reasons)}")
        for q in r.requests:
            if q.result == "miss":
                what = "archived, not served" if q.archived else "never captured"
                lines.append(f"miss    {q.method} {q.url}  ({what}; nearest: {q.nearest or 'none'})")
            elif q.result == "blocked" and q.archived:
                lines.append(f"blocked {q.method} {q.url}  (archived, not served)")
        for c in r.websockets:
            if deviates(c):
                lines.append(
                    f"socket  {c.url}  ({c.served} of {c.captured} messages served, "
                    f"{len(c.client_misses)} client messages matched none)"
                )
    total = sum(r.misses for r in reports)
    archived = sum(r.archived_misses for r in reports)
    lines.append(f"{len(reports)} pages, {total} misses, {archived} of them of archived URLs")
    return "\n".join(lines)
