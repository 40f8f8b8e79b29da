"""pywb 2.10 in its own HTTP/S proxy mode, serving one collection, as a reference replay for Chromium.

pywb's proxy mode (the ``proxy:`` block of its ``config.yaml``) answers every request a browser sends
through ``--proxy-server`` from one collection, so the page sees its original URLs, as it does in
capreplay. The collection is made with ``wb-manager add`` from the original WARC or WACZ file, so pywb
reads the other tool's bytes itself, not a copy that capreplay wrote.

Two templates are replaced by pages that carry a fixed marker, so a client can tell pywb's own "not in
this collection" answer (:data:`NOT_FOUND_MARKER`) and its error page (:data:`ERROR_MARKER`) from an
archived 404 or 500, which pywb replays with the archived status.

:func:`pywb_keys` canonicalises URLs with pywb's own ``canonicalize`` (SURT form, scheme dropped), run in
pywb's environment: the reference for "the archive holds this URL".
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

from capreplay.testing.pywb import STEP_TIMEOUT, ToolInstall, _clean_env, _run

NOT_FOUND_MARKER = "capreplay-bench: pywb-not-found"
ERROR_MARKER = "capreplay-bench: pywb-error"
PROXY_HOST = "pywb-proxy.invalid"
"""The name Chromium is given for the proxy; resolver rules map it (and nothing else) to 127.0.0.1."""

_NOT_FOUND_TEMPLATE = f"<!doctype html><title>URL Not Found</title><!-- {NOT_FOUND_MARKER} --><p>{{{{ url }}}}\n"
_ERROR_TEMPLATE = (f"<!doctype html><title>Error</title><!-- {ERROR_MARKER} -->"
                   "<p>{{ err_msg }} {{ err_details }}\n")


def proxy_config(collection: str, *, rewrite: bool, timestamp: str | None) -> str:
    """pywb's ``config.yaml`` for proxy mode on ``collection`` (YAML is a superset of JSON).

    ``rewrite`` False serves archived bytes unchanged (``id_``); True is pywb's default (``bn_``: wombat's
    proxy-mode script inserted into HTML). ``timestamp`` (14 digits) is the capture time pywb prefers.
    """
    # No wildcard certificates: choosing the parent domain makes pywb fetch the public suffix list.
    proxy: dict[str, object] = {"coll": collection, "enable_content_rewrite": rewrite,
                                "enable_cert_download": False, "use_wildcard_certs": False}  # fmt: skip
    if timestamp:
        proxy["default_timestamp"] = timestamp
    config = {"proxy": proxy, "not_found_html": "bench_not_found.html", "error_html": "bench_error.html",
              "enable_memento": True}  # fmt: skip
    return json.dumps(config, indent=2) + "\n"


def make_proxy_collection(pywb: ToolInstall, root: Path, collection: str, archive: Path, *, rewrite: bool = False,
                          timestamp: str | None = None) -> None:  # fmt: skip
    """A pywb folder ``root`` serving ``archive`` (WARC or WACZ) in proxy mode as ``collection``."""
    root.mkdir(parents=True, exist_ok=True)
    templates = root / "templates"
    templates.mkdir(exist_ok=True)
    (templates / "bench_not_found.html").write_text(_NOT_FOUND_TEMPLATE)
    (templates / "bench_error.html").write_text(_ERROR_TEMPLATE)
    (root / "config.yaml").write_text(proxy_config(collection, rewrite=rewrite, timestamp=timestamp))
    _run([pywb.tool("wb-manager"), "init", collection], cwd=root, timeout=STEP_TIMEOUT, what="wb-manager init")
    add = [pywb.tool("wb-manager"), "add"]
    if archive.suffix == ".wacz":
        add.append("--unpack-wacz")
    _run([*add, collection, str(archive.absolute())], cwd=root, timeout=STEP_TIMEOUT, what="wb-manager add")


def proxy_args(proxy_port: int) -> list[str]:
    """Chromium arguments that send every request to pywb's proxy and resolve no other name.

    Loopback is proxied too (Chromium bypasses the proxy for it by default), so an archived
    ``localhost`` page comes from the archive; pywb's per-host certificates are signed by a CA it makes
    at start-up, which this browser is told to accept since it can reach nothing but the proxy.
    """
    return [
        f"--proxy-server=http://{PROXY_HOST}:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",
        f"--host-resolver-rules=MAP {PROXY_HOST} 127.0.0.1, MAP * ~NOTFOUND",
        "--ignore-certificate-errors",
    ]


_KEYS_SCRIPT = (
    "import json, sys\n"
    "from pywb.utils.canonicalize import canonicalize\n"
    "out = {}\n"
    "for url in json.load(sys.stdin):\n"
    "    try:\n"
    "        out[url] = canonicalize(url)\n"
    "    except Exception as e:\n"  # pywb refuses some URLs (no host); such a URL has no key
    "        out[url] = None\n"
    "json.dump(out, sys.stdout)\n"
)


def pywb_keys(pywb: ToolInstall, urls: Iterable[str]) -> dict[str, str | None]:
    """pywb's canonical key (SURT) of each URL, or None where pywb cannot canonicalise it."""
    wanted = sorted(set(urls))
    done = subprocess.run([str(pywb.bin_dir / "python"), "-c", _KEYS_SCRIPT], input=json.dumps(wanted),
                          capture_output=True, text=True, env=_clean_env(), timeout=STEP_TIMEOUT,
                          check=True)  # fmt: skip
    keys: dict[str, str | None] = json.loads(done.stdout)
    return keys
