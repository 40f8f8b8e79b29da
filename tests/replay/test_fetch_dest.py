"""What a request is for, read from its headers as Chromium sends them: ``Sec-Fetch-Dest`` where it is sent, else
(plain http, where Chromium sends no ``Sec-Fetch-*``) the navigation and ``Accept`` headers. The header sets below
are Chromium 156's, copied from requests it sent to a plain-http origin."""

from __future__ import annotations

import pytest

from capreplay.replay.turns import fetch_dest

NAVIGATION = {
    "Upgrade-Insecure-Requests": "1",
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,image/webp,image/apng,"
    "*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
}
SCRIPT = {"Accept": "*/*"}  # a script, and a fetch() too
STYLE = {"Accept": "text/css,*/*;q=0.1"}
IMAGE = {"Accept": "image/jxl,image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"}


@pytest.mark.parametrize(
    ("headers", "dest"),
    [
        (NAVIGATION, "document"),
        (SCRIPT, "empty"),
        (STYLE, "style"),
        (IMAGE, "image"),
        ({}, None),  # no browser: never held
        ({**NAVIGATION, "Sec-Fetch-Dest": "iframe"}, "iframe"),  # the browser's own word wins
        ({**SCRIPT, "Sec-Fetch-Dest": "script"}, "script"),
        ({"Accept": "text/html"}, "empty"),  # a script's fetch of HTML is no navigation
    ],
)
def test_what_a_request_is_for(headers: dict[str, str], dest: str | None) -> None:
    assert fetch_dest(headers) == dest
