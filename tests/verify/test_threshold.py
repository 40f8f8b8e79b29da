"""The fidelity threshold as a pure rule: each measure against its limit, and the words verify prints."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from capreplay.verify.fidelity import PixelDiff, TextDiff, compare_pixels, compare_text
from capreplay.verify.threshold import MAX_PIXELS_CHANGED, MIN_TEXT_SIMILARITY, judge_fidelity

SAME_PIXELS = PixelDiff(True, 0.0, 0)
SAME_TEXT = TextDiff(True, 1.0, None)


def _png(box: tuple[int, int, int, int] | None) -> bytes:
    """A 100x100 white image with ``box`` (left, top, right, bottom; right and bottom exclusive) painted black."""
    image = Image.new("RGB", (100, 100), "white")
    if box is not None:
        ImageDraw.Draw(image).rectangle((box[0], box[1], box[2] - 1, box[3] - 1), fill="black")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_an_identical_page_passes() -> None:
    verdict = judge_fidelity(SAME_PIXELS, SAME_TEXT)
    assert verdict.passed and verdict.reasons == ()


def test_the_limits_sit_between_the_measured_correct_and_broken_replays() -> None:
    # Figures of scripts/bench_verify_threshold.py: a correct replay drawn with other fonts changed 44.5% of its
    # pixels and none of its text; a page without its stylesheets changed 99.8% (median); an empty skeleton kept
    # 7.7% of its text, a report without the script that fills it 48%.
    assert 0.445 < MAX_PIXELS_CHANGED < 0.998
    assert 0.48 < MIN_TEXT_SIMILARITY < 1.0


def test_a_limit_is_inclusive() -> None:
    assert judge_fidelity(PixelDiff(False, MAX_PIXELS_CHANGED, 255), TextDiff(False, MIN_TEXT_SIMILARITY, "x")).passed


def test_the_issues_skeleton_fails_on_both_measures_with_its_figures() -> None:
    verdict = judge_fidelity(PixelDiff(False, 0.3757, 255), TextDiff(False, 0.053, "'a' != ''"),
                             max_pixels_changed=0.1, min_text_similarity=0.8)  # fmt: skip
    assert not verdict.passed
    assert verdict.reasons == ("pixels 37.57% differ (limit 10%)", "text 5.3% alike (limit 80%)")


def test_either_measure_alone_fails_a_page() -> None:
    # A stylesheet that never came: every word is there, the layout is not.
    unstyled = judge_fidelity(PixelDiff(False, 0.6, 255), SAME_TEXT, max_pixels_changed=0.1)
    assert not unstyled.passed and unstyled.reasons == ("pixels 60.00% differ (limit 10%)",)
    # Text that changed below the fold, where the viewport's screenshot does not reach.
    rewritten = judge_fidelity(SAME_PIXELS, TextDiff(False, 0.5, "'a' != 'b'"), min_text_similarity=0.8)
    assert not rewritten.passed and rewritten.reasons == ("text 50.0% alike (limit 80%)",)


def test_measured_screenshots_and_texts_either_side_of_the_limits() -> None:
    blank = _png(None)
    # 5x5 of 100x100 pixels: 0.25% differ; 60x60: 36% differ.
    small, large = compare_pixels(blank, _png((0, 0, 5, 5))), compare_pixels(blank, _png((0, 0, 60, 60)))
    assert (small.changed_fraction, large.changed_fraction) == (0.0025, 0.36)
    article = "\n".join(f"paragraph {i}" for i in range(20))
    # One of 20 lines changed: ratio 2*19/40 = 0.95. The skeleton keeps one line of 20: 2*1/21.
    edited = compare_text(article, article.replace("paragraph 7", "paragraph seven"))
    skeleton = compare_text(article, "paragraph 0")
    assert (edited.similarity, round(skeleton.similarity, 4)) == (0.95, 0.0952)
    limits = {"max_pixels_changed": 0.1, "min_text_similarity": 0.8}
    assert judge_fidelity(small, edited, **limits).passed
    assert not judge_fidelity(large, skeleton, **limits).passed
