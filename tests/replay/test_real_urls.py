"""What real pages ask for that their archive holds under another spelling or with other volatile values.

A page's stylesheet URL spelled ``%2C`` where the archive has ``,`` (MediaWiki's ``load.php``), and the
reverse, are exact hits. Everything runs in a real Chromium on an archive written by another tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from tests.support.foreign_warc import gz, page, request
from tests.support.replay import replay

pytestmark = pytest.mark.browser

HOST = "https://en.wiki.test"


def write_archive(tmp_path: Path, page_html: bytes, resources: dict[str, tuple[bytes, str]]) -> Path:
    """An imported snapshot of ``HOST/`` with ``page_html`` and ``resources`` (URL -> body, type)."""
    records = [page(1, f"{HOST}/", page_html), request(2, f"{HOST}/", 1)]
    for n, (url, (body, ctype)) in enumerate(resources.items(), start=1):
        records += [page(2 * n + 1, url, body, headers=[("Content-Type", ctype)]), request(2 * n + 2, url, 2 * n + 1)]
    (tmp_path / "in.warc.gz").write_bytes(gz(*records))
    import_archives(ImportOptions(inputs=[tmp_path / "in.warc.gz"], out=tmp_path / "snap", random_seed=DEFAULT_SEED))
    return tmp_path / "snap"


async def test_percent_encoded_and_literal_commas_in_a_query_are_one_url(tmp_path: Path) -> None:
    html = (
        b'<!doctype html><html><head><title>Wiki</title>'
        b'<link rel="stylesheet" href="/w/load.php?modules=a%2Cb%2Cc&only=styles">'
        b'<script src="/w/load.php?modules=x,y&only=scripts"></script></head>'
        b'<body><h1 id="h">Article</h1></body></html>'
    )
    snap = write_archive(tmp_path, html, {
        f"{HOST}/w/load.php?modules=a,b,c&only=styles": (b"h1 { color: rgb(4, 5, 6); }", "text/css"),
        f"{HOST}/w/load.php?modules=x%2cy&only=scripts": (b"document.title = 'ran';", "text/javascript"),
    })
    async with replay(snap) as (server, context):
        tab = await context.new_page()
        await tab.goto(f"{HOST}/", wait_until="load")
        color = await tab.evaluate("() => getComputedStyle(document.getElementById('h')).color")
        title = await tab.title()
        served = {s.url: (s.result, s.rule) for s in server.served}
    assert (color, title) == ("rgb(4, 5, 6)", "ran")
    assert served[f"{HOST}/w/load.php?modules=a%2Cb%2Cc&only=styles"] == ("hit", None)
    assert served[f"{HOST}/w/load.php?modules=x,y&only=scripts"] == ("hit", None)


async def test_beacons_and_jsonp_with_fresh_times_and_ids_get_the_archived_answer(tmp_path: Path) -> None:
    # The archive was written elsewhere, at another time: every volatile value differs from replay's.
    html = (
        b'<!doctype html><html><head><title>News</title></head><body><p id="out">waiting</p><script>'
        b"window.got = (data) => { document.getElementById('out').textContent = data.headline; };"
        b"const s = document.createElement('script');"
        b"s.src = '/comet?callback=got&sid=' + Math.random().toString(36).slice(2) + '&data=' +"
        b" btoa(JSON.stringify({t: performance.now(), ua: navigator.userAgent}));"
        b"document.head.appendChild(s);"
        b"const img = new Image(); img.id = 'beacon';"
        b"img.src = '/p.gif?ev=view&timeFromNavigationStart=' + Math.round(performance.now() * 1000);"
        b"document.body.appendChild(img);"
        b"</script></body></html>"
    )
    gif = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")
    snap = write_archive(tmp_path, html, {
        f"{HOST}/comet?callback=jQuery1_1520301385356&sid=k3j4h5&data=eyJ0IjoxMjMuNH0": (
            b'jQuery1_1520301385356({"headline": "Archived news"})', "application/javascript"),
        f"{HOST}/p.gif?ev=view&timeFromNavigationStart=-275834820061": (gif, "image/gif"),
    })
    async with replay(snap) as (server, context):
        tab = await context.new_page()
        await tab.goto(f"{HOST}/", wait_until="load")
        await tab.wait_for_function("() => document.getElementById('out').textContent !== 'waiting'", timeout=5000)
        text = await tab.text_content("#out")
        width = await tab.evaluate("() => document.getElementById('beacon').naturalWidth")
        served = [(s.url.split("?")[0], s.result, s.rule) for s in server.served if "favicon" not in s.url]
    assert (text, width) == ("Archived news", 1)
    assert (f"{HOST}/comet", "fuzzy", "nearest-query") in served
    assert (f"{HOST}/p.gif", "fuzzy", "nearest-query") in served
    assert all(result != "miss" for _, result, _ in served), served
