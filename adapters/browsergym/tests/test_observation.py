"""An observation's DOM snapshot written out as HTML: a snapshot built by hand in CDP's DOMSnapshot layout."""

from __future__ import annotations

from typing import Any

from bs4 import BeautifulSoup

from capreplay_browsergym.locate import inner_text
from capreplay_browsergym.observation import dom_html


def _snapshot() -> dict[str, Any]:
    strings = ["#document", "HTML", "BODY", "DT", "bid", "7", "EM", "#text", "x_for", "=", "1 < 2", "::before",
               "IMG", "src", "a.png", "browsergym_visibility_ratio", "0.5", "#comment", "note", "IFRAME", "P", "inside",
               "class", 'say "hi"']  # fmt: skip
    s = {text: n for n, text in enumerate(strings)}
    top = {
        # document > html > body > dt(bid 7) > [::before, em > "x_for", "=", em > "1 < 2", img, comment], iframe
        "nodeType": [9, 1, 1, 1, 1, 3, 3, 1, 3, 1, 1, 8, 1],
        "nodeName": [s["#document"], s["HTML"], s["BODY"], s["DT"], s["EM"], s["#text"], s["#text"], s["EM"],
                     s["#text"], s["::before"], s["IMG"], s["#comment"], s["IFRAME"]],
        "nodeValue": [-1, -1, -1, -1, -1, s["x_for"], s["="], -1, s["1 < 2"], -1, -1, s["note"], -1],
        "parentIndex": [-1, 0, 1, 2, 3, 4, 3, 3, 7, 3, 3, 3, 2],
        "attributes": [[], [], [], [s["bid"], s["7"], s["class"], s['say "hi"']], [], [], [], [], [], [],
                       [s["src"], s["a.png"], s["browsergym_visibility_ratio"], s["0.5"]], [], []],
        "contentDocumentIndex": {"index": [12], "value": [1]},
    }
    inner = {
        "nodeType": [9, 1, 3],
        "nodeName": [s["#document"], s["P"], s["#text"]],
        "nodeValue": [-1, -1, s["inside"]],
        "parentIndex": [-1, 0, 1],
        "attributes": [[], [], []],
        "contentDocumentIndex": {"index": [], "value": []},
    }
    return {"strings": strings, "documents": [{"nodes": top}, {"nodes": inner}]}


def test_the_snapshot_is_written_with_the_pages_own_text() -> None:
    html = dom_html(_snapshot())
    assert html == ('<html><body><dt bid="7" class="say &quot;hi&quot;"><em>x_for</em>=<em>1 &lt; 2</em>'
                    '<img src="a.png"></dt><iframe><p>inside</p></iframe></body></html>')  # fmt: skip
    soup = BeautifulSoup(html, "lxml")
    assert inner_text(soup.select_one("dt[bid='7']")) == "x_for=1 < 2"
