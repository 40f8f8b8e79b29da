"""The index key of a URL as pywb computes it; the expected keys are pywb 2.10's own ``canonicalize`` output.

tests/integration/test_export_pywb.py compares many more URLs with a running pywb installation.
"""

from __future__ import annotations

import pytest

from capreplay.archive.index.pywb_urlkey import pywb_urlkey


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://www.shop.test/", "test,shop)/"),
        ("https://www.Example.com/A%7eB/?b=2&a=1", "com,example)/a~b?a=1&b=2"),
        ("https://example.com/a/./b/../c//d/", "com,example)/a/c/d"),
        ("http://bücher.de/straße?ä=ö", "de,xn--bcher-kva)/stra%c3%9fe?%c3%a4=%c3%b6"),
        ("http://0x7f.1/", "1,0x7f)/"),
        ("http://2130706433/", "1,0,0,127)/"),
        ("http://example.com/a?x=1&sid=0123456789abcdef0123456789abcdef", "com,example)/a?&x=1"),
        ("http://example.com/(S(0123456789abcdefghijklmn))/page.aspx?x", "com,example)/page.aspx?x"),
        ("https://example.com:8443/a/", "com,example:8443)/a"),
        ("https://example.com:443/a", "com,example)/a"),
        ("http://user:pw@Example.com/x#frag", "com,example)/x"),
        ("https://example.com/a?b=&a", "com,example)/a?a&b="),
        ("http://example.com/%2541", "com,example)/a"),
        ("example.com/path", "com,example)/path"),
        ("https://example.com/?", "com,example)/"),
        ("http://[::1]:8080/a", "::1:8080)/a"),
        ("https://www.shop.test/form/submit?__wb_method=POST&name=Ada Lovelace&qty=3&size=M",
         "test,shop)/form/submit?__wb_method=post&name=ada%20lovelace&qty=3&size=m"),
    ],
)
def test_pywb_urlkey(url: str, key: str) -> None:
    assert pywb_urlkey(url) == key
