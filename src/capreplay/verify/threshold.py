"""Whether a replayed page is close enough to what the capture saw: the fidelity threshold of ``verify``. Pure.

A page that gets every request answered can still come out broken: content that a script builds from a
message or a response the replay cannot give leaves an empty skeleton, and only the comparison with the
capture's own screenshot and visible text shows it. A page fails when its replay is farther from its capture than
correct replays ever are, on either measure. The limits were chosen from measured variation
(``scripts/bench_verify_threshold.py``, docs/methodology/fidelity-threshold.md): above the largest difference of
any correctly replayed page, also when verify runs with other fonts than the capture did, and below what a page
whose data or stylesheets did not arrive shows. Text carries most of the verdict, since fonts move pixels but not
words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from capreplay.verify.fidelity import PixelDiff, TextDiff

if TYPE_CHECKING:
    from capreplay.verify.page_loads import PageReport

MIN_TEXT_SIMILARITY = 0.80
"""Smallest line similarity (difflib ratio) the visible text may have with the capture's. Every correct replay
measured keeps 1.0, on this machine's fonts and on others (visible text does not depend on fonts); a page that
replays as an empty skeleton keeps 5-8%, a report whose tables a script fills 40-48%."""
MAX_PIXELS_CHANGED = 0.60
"""Largest share of the viewport's pixels that may differ from the capture's screenshot. Correct replays differ
by 0.0016% at most with the capture's fonts, but by up to 44.5% (a page of plain paragraphs in sans-serif) when
the browser draws Arial and the generic families with other fonts than the capture machine did, so a tighter
limit would fail correct replays on another machine. Above it: 86 of the 91 pages whose stylesheets never came.
An empty skeleton (38-53% of pixels) fails on its text instead."""


@dataclass(frozen=True)
class FidelityVerdict:
    """Whether one page's replay is within the threshold, and by how much it is not."""

    passed: bool
    reasons: tuple[str, ...]
    """One phrase per measure beyond its limit, e.g. ``pixels 37.57% differ (limit 10%)``; empty when passed."""


def judge_fidelity(
    pixels: PixelDiff,
    text: TextDiff,
    *,
    max_pixels_changed: float = MAX_PIXELS_CHANGED,
    min_text_similarity: float = MIN_TEXT_SIMILARITY,
) -> FidelityVerdict:
    """Compare one page's pixel and text differences with the limits."""
    reasons: list[str] = []
    if pixels.changed_fraction > max_pixels_changed:
        reasons.append(f"pixels {pixels.changed_fraction:.2%} differ (limit {max_pixels_changed:.0%})")
    if text.similarity < min_text_similarity:
        reasons.append(f"text {text.similarity:.1%} alike (limit {min_text_similarity:.0%})")
    return FidelityVerdict(passed=not reasons, reasons=tuple(reasons))


def page_verdict(report: PageReport) -> FidelityVerdict | None:
    """The verdict on one verified page; None where there was nothing to compare with (an imported page, a
    page that failed to load)."""
    if report.pixels is None or report.text is None:
        return None
    return judge_fidelity(report.pixels, report.text)
