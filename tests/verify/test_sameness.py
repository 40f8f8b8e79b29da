"""Where two replays differ: the first differing DOM stretch, and the changed pixels with their box."""

from __future__ import annotations

import io

from PIL import Image

from capreplay.verify.sameness import first_dom_difference, pixel_region, union_box


def _png(size: tuple[int, int], dots: dict[tuple[int, int], tuple[int, int, int]] | None = None) -> bytes:
    image = Image.new("RGB", size, (255, 255, 255))
    for xy, colour in (dots or {}).items():
        image.putpixel(xy, colour)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_equal_doms_have_no_difference() -> None:
    assert first_dom_difference("<p>a</p>", "<p>a</p>") is None


def test_first_difference_names_offset_line_and_both_stretches() -> None:
    first = "<html>\n<body>\n<p id=a>1520301385356</p>\n</body>"
    second = "<html>\n<body>\n<p id=a>1520301399999</p>\n</body>"
    diff = first_dom_difference(first, second, context=8)
    assert diff is not None
    assert diff.offset == first.index("85356")
    assert diff.line == 3
    assert diff.first == "1520301385356</p"
    assert diff.second == "1520301399999</p"
    assert diff.length_delta == 0


def test_a_dom_that_is_a_prefix_of_the_other_differs_at_its_end() -> None:
    diff = first_dom_difference("<p>", "<p><img>")
    assert diff is not None and diff.offset == 3 and diff.length_delta == 5


def test_identical_pixels() -> None:
    assert pixel_region(_png((4, 3)), _png((4, 3))).changed == 0


def test_one_channel_off_by_one_counts_and_is_boxed() -> None:
    # a grey conversion would round this change to nothing
    region = pixel_region(_png((10, 10)), _png((10, 10), {(2, 3): (254, 255, 255), (7, 5): (0, 0, 0)}))
    assert region.changed == 2
    assert region.fraction == 2 / 100
    assert region.box == (2, 3, 8, 6)


def test_sizes_that_differ_count_every_pixel() -> None:
    region = pixel_region(_png((4, 4)), _png((4, 5)))
    assert region.sizes_differ and region.changed == 20 and region.fraction == 1.0


def test_union_box() -> None:
    assert union_box([None, (1, 2, 3, 4), (0, 5, 2, 6)]) == (0, 2, 3, 6)
    assert union_box([None]) is None
