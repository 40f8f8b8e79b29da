"""Replay's URL canonicalisation against pywb's: wherever pywb 2.10's ``canonicalize`` takes two spellings of
a URL as one, so does the matcher's canonical form.

The URLs are every target URL in ``../shared/interop/`` (WARCs inside WACZ files too) and a list of hard
cases; each is respelled in the ways browsers and archivers differ (hex case of escapes, reserved characters
escaped or not, scheme and host case, default port, empty ``?``, fragment), and real pywb is the oracle.
Where capreplay deliberately keeps apart what pywb merges (the case of the path, a trailing slash,
``%2F`` in a path, ``%26``/``%3D``/``%2B`` in a query), the last tests pin the difference down.
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from io import BytesIO

import pytest
from warcio.archiveiterator import ArchiveIterator

from capreplay.replay.rules import normalize_url
from capreplay.testing.pywb import ToolInstall
from tests.support.pywb import INTEROP, TRICKY_URLS

pytestmark = pytest.mark.slow

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_DELIMS_IN_PARTS = ",;:@!$'()*"  # reserved, yet delimit nothing in a path or a query
_HARD_CASES = [
    "http://bücher.de/straße?ä=ö", "http://xn--bcher-kva.de/stra%C3%9Fe?%C3%A4=%C3%B6",
    "https://en.wikipedia.org/w/load.php?lang=en&modules=ext.cite.styles%7Cskins.vector&only=styles",
    "https://en.wikipedia.org/w/load.php?modules=a%2Cb%2Cc&skin=vector", "https://x.test/a,b/c;d?e=f,g",
    "https://x.test/p%3a%40?q=%2c%3b%21",
]


def _interop_urls() -> list[str]:
    urls: list[str] = []
    for path in sorted(INTEROP.rglob("*")) if INTEROP.is_dir() else []:
        if path.suffix == ".wacz":
            with zipfile.ZipFile(path) as zf:
                warcs = [zf.read(n) for n in zf.namelist() if n.startswith("archive/")]
        elif ".warc" in path.name:
            warcs = [path.read_bytes()]
        else:
            continue
        for data in warcs:
            urls += [r.rec_headers.get_header("WARC-Target-URI") or "" for r in ArchiveIterator(BytesIO(data))]
    return [u for u in urls if u.startswith(("http://", "https://"))]


def respellings(url: str) -> list[str]:
    """``url`` written the other ways that mean the same to a server and to pywb."""
    head = url.partition("#")[0]
    base, qmark, query = head.partition("?")
    scheme, _, rest = base.partition("://")
    host, slash, path = rest.partition("/")
    out = [
        _ESCAPE.sub(lambda m: m[0].lower(), url),
        _ESCAPE.sub(lambda m: m[0].upper(), url),
        f"{scheme.upper()}://{host.upper()}{slash}{path}{qmark}{query}",
        head + "#frag",
        head + "?" if not qmark else head,
    ]
    if ":" not in host:
        out.append(f"{scheme}://{host}:{443 if scheme == 'https' else 80}{slash}{path}{qmark}{query}")
    for char in _DELIMS_IN_PARTS:
        escaped = f"%{ord(char):02X}"
        if char in path or char in query:
            out.append(f"{scheme}://{host}{slash}{path.replace(char, escaped)}{qmark}{query.replace(char, escaped)}")
        if escaped in url.upper():
            out.append(re.sub(re.escape(escaped), char, url, flags=re.IGNORECASE))
    return [u for u in dict.fromkeys(out) if u != url]


def pywb_keys(pywb: ToolInstall, urls: list[str]) -> dict[str, str]:
    script = ("import json, sys\n"
              "from pywb.utils.canonicalize import canonicalize\n"
              "print(json.dumps([canonicalize(u) for u in json.load(sys.stdin)]))\n")
    done = subprocess.run([pywb.tool("python"), "-c", script], input=json.dumps(urls), capture_output=True, text=True,
                          timeout=300, check=True)
    return dict(zip(urls, json.loads(done.stdout), strict=True))


def test_every_spelling_pywb_takes_as_one_url_the_matcher_takes_as_one(pywb: ToolInstall) -> None:
    originals = sorted({*_interop_urls(), *TRICKY_URLS, *_HARD_CASES})
    pairs = [(u, v) for u in originals for v in respellings(u)]
    keys = pywb_keys(pywb, sorted({u for pair in pairs for u in pair}))
    same_for_pywb = [(u, v) for u, v in pairs if keys[u] == keys[v]]
    apart = [(u, v) for u, v in same_for_pywb if normalize_url(u) != normalize_url(v)]
    assert not apart, apart[:20]
    assert len(originals) > 350 and len(same_for_pywb) > 1000  # the interop files are all there, and were read


def test_the_wikipedia_stylesheet_url_is_one_url_whichever_way_its_commas_are_written() -> None:
    literal = "https://en.wikipedia.org/w/load.php?modules=a,b,c&only=styles"
    for spelling in ("modules=a%2Cb%2Cc", "modules=a%2cb%2cc", "modules=a,b%2Cc"):
        assert normalize_url(literal.replace("modules=a,b,c", spelling)) == literal


def test_an_international_host_is_its_idna_form() -> None:
    assert normalize_url("http://Bücher.de/") == "http://xn--bcher-kva.de/"
    assert normalize_url("http://b%C3%BCcher.de/") == "http://xn--bcher-kva.de/"


def test_java_session_ids_in_a_path_are_not_part_of_the_url() -> None:
    # pywb keeps them (its session-id rules cover queries and ASP.NET paths only): capreplay merges more.
    assert normalize_url("https://x.test/cart;jsessionid=0A1B2C?x=1") == "https://x.test/cart?x=1"
    assert normalize_url("https://x.test/a;JSESSIONID=zz/b") == "https://x.test/a/b"
    assert normalize_url("https://x.test/a;v=1/b") == "https://x.test/a;v=1/b"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://x.test/A", "https://x.test/a"),  # servers may tell path case apart
        ("https://x.test/dir/", "https://x.test/dir"),  # and a directory from a file
        ("https://x.test/a%2Fb", "https://x.test/a/b"),  # one path segment, or two
        ("https://x.test/s?q=a%26b", "https://x.test/s?q=a&b"),  # one parameter, or two
        ("https://x.test/s?q=a%3Db", "https://x.test/s?q=a=b"),
        ("https://x.test/s?q=1%2B1", "https://x.test/s?q=1+1"),  # a plus, or a space
    ],
)
def test_what_pywb_merges_and_capreplay_keeps_apart(pywb: ToolInstall, first: str, second: str) -> None:
    keys = pywb_keys(pywb, [first, second])
    assert keys[first] == keys[second]
    assert normalize_url(first) != normalize_url(second)
