"""Where the pywb tests find their tools and their URLs: the install folders, other tools' WARCs, hard cases."""

from __future__ import annotations

from tests.support.paths import ROOT

PYWB_DIR = ROOT / ".cache" / "pywb-2.10"
"""pywb 2.10's environment of its own, installed by the first run (see :mod:`capreplay.testing.pywb`)."""
PY_WACZ_DIR = ROOT / ".cache" / "py-wacz-0.6"
"""py-wacz's environment, installed like pywb's."""
INTEROP = ROOT.parent / "shared" / "interop"
"""WARCs and WACZ files other tools wrote (test data outside the repository, where present)."""
TRICKY_URLS = [
    "https://www.Example.com/A%7eB/?b=2&a=1", "https://example.com/a/./b/../c//d/", "http://bücher.de/straße?ä=ö",
    "http://EXAMPLE.com:80/", "https://example.com:8443/a/", "http://user:pw@Example.com/x#f", "http://www3.example.com/",
    "http://wwwexample.com/", "http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/x", "http://127.1/",
    "http://[::1]:8080/a", "http://example.com/%2541", "http://example.com/..", "https://example.com/a;b=c/d",
    "http://example.com/a?jsessionid=0123456789abcdef0123456789abcdef&b=1", "http://example.com/a?cfid=1&cftoken=2&z=1",
    "http://example.com/(S(0123456789abcdefghijklmn))/page.aspx?x", "http://example.com/?", "example.com/path",
    "http://http://example.com/", "https://example.com/a?b=&a", "https://example.com/a?B=2&a=1&A=0",
    "https://example.com/a%20b?c%20d=e+f", "https://example.com/a?q=%E2%82%AC&r=%ZZ", "https://ex..ample.com./",
    "https://example.com/a?__wb_method=POST&name=Ada Lovelace&qty=3", "https://example.com/a?&&b",
]  # fmt: skip
"""URLs that canonicalisers disagree on: case, dot segments, ports, numeric hosts, session ids, escapes."""
