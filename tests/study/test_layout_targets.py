"""ACT on the screenshot is scored in the layout the screenshot shows, for targets the viewport positions.

A bar fixed to the bottom of the viewport moves with the viewport's height: browser-use's attachment
dropped the viewport emulation (800 px tall became 713), and boxes measured after it were about 90 px
above the buttons the screenshot shows. The page here has a bar fixed to the bottom, a sticky header and a
fixed side button, each button a colour found nowhere else; the expected click point is the centre of that
colour in the screenshot's own pixels, so the test does not lean on the code that measures boxes.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from capreplay.models.task import ActTask
from capreplay.study.page.session import page_session, study_browser
from capreplay.study.representations import REPRESENTATIONS
from tests.support.foreign_warc import gz, page, request

pytestmark = pytest.mark.browser

URL = "https://layout.example/"
COLOURS = {"banner": (255, 0, 0), "header": (0, 0, 255), "side": (0, 160, 0)}
HTML = b"""<!doctype html><html><head><meta charset="utf-8"><title>Fixed and sticky</title><style>
body { margin: 0; font: 16px sans-serif; }
header { position: sticky; top: 0; height: 64px; background: #eee; }
#header { position: absolute; left: 40px; top: 12px; width: 120px; height: 40px; background: rgb(0, 0, 255); }
#side { position: fixed; right: 0; top: 300px; width: 48px; height: 120px; background: rgb(0, 160, 0); }
.banner { position: fixed; left: 0; right: 0; bottom: 0; height: 72px; background: #333; }
#banner { position: absolute; left: 560px; top: 16px; width: 160px; height: 40px; background: rgb(255, 0, 0); }
button { border: 0; color: transparent; }
main p { height: 400px; margin: 0; }
</style></head><body>
<header><button id="header">Menu</button></header>
<main><p>One</p><p>Two</p><p>Three</p><p>Four</p></main>
<button id="side">Help</button>
<div class="banner"><button id="banner">Accept cookies</button></div>
</body></html>"""


def _centre(png: bytes, colour: tuple[int, int, int]) -> tuple[float, float]:
    """The centre of the pixels of exactly ``colour`` in the screenshot."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    xs, ys = [], []
    for i, pixel in enumerate(image.get_flattened_data()):
        if pixel == colour:
            xs.append(i % image.width)
            ys.append(i // image.width)
    assert xs, f"no pixel of {colour} in the screenshot"
    return (min(xs) + max(xs) + 1) / 2, (min(ys) + max(ys) + 1) / 2


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("layout")
    (folder / "site.warc.gz").write_bytes(gz(page(1, URL, HTML), request(2, URL, 1)))
    import_archives(ImportOptions(inputs=[folder / "site.warc.gz"], out=folder / "snap", random_seed=DEFAULT_SEED))
    return folder / "snap"


async def test_a_click_where_the_screenshot_shows_a_target_scores_correct_and_90_px_above_does_not(
    snapshot: Path,
) -> None:
    tasks = [ActTask(id=name, page="p", kind="ACT", instruction=f"Click {name}", target=[f"#{name}"])
             for name in COLOURS]  # fmt: skip
    screenshot = REPRESENTATIONS["screenshot"]
    async with (study_browser(snapshot, stagehand=False) as (context, adapter),
                page_session(context, adapter, URL, tasks) as session):
        for name, colour in COLOURS.items():
            x, y = _centre(session.views.screenshot_png, colour)
            right = await session.score_act(name, screenshot, {"x": x, "y": y})
            assert right.correct, (name, x, y, right)
            above = await session.score_act(name, screenshot, {"x": x, "y": y - 90})
            assert not above.correct, (name, x, y - 90, above)
        # Where the page puts the banner button by construction: 800 - 72 + 16 .. + 40, so centre y 764.
        assert _centre(session.views.screenshot_png, COLOURS["banner"]) == (640.0, 764.0)
        layouts = session.views.layouts
        assert (layouts["screenshot"].inner_width, layouts["screenshot"].inner_height) == (1280, 800)
        assert layouts["browser_use"].inner_height != 800, "browser-use no longer drops the emulation: say so"
        assert layouts["restored"] == layouts["screenshot"], layouts
