"""Deterministic synthetic snapshots, for load tests and benchmarks of replay at realistic sizes.

:func:`generate_snapshot` writes a valid snapshot (WARCs through the archive layer's own record builder
and appender, the CDXJ index and the replay server's ready responses in one pass (``IndexWithReady``, the
index's bytes those of ``build_index``/``write_index``), a verified ``manifest.json``) of
``records`` responses. The mix follows what a crawl of many small sites archives: HTML pages, CSS, JS,
PNG and JPEG images, JSON API answers and a few redirects, on many hosts under ``.test``, some URLs with
query strings. Stored body sizes are log-normal per kind, calibrated so that 100,000 responses make about
670 MB of archive (6.7 KB per response with its request, headers and gzip framing); most text is stored
gzip-encoded, as servers send it. The same seed gives the same bytes: record ids and dates come from
the seed, and every record's content from a generator seeded with ``(seed, record number)``.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import random
import uuid
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from importlib.metadata import version
from itertools import accumulate
from pathlib import Path
from typing import Literal

from capreplay.archive.snapshot.manifest import collect_files, write_manifest
from capreplay.archive.warc.append import WarcAppender
from capreplay.archive.warc.build import exchange_records, format_warc_date, warcinfo_record
from capreplay.archive.warc.exchange import Exchange
from capreplay.errors import InputError
from capreplay.models.manifest import Manifest, PageEntry, snapshot_id
from capreplay.replay.ready.with_index import IndexWithReady
from capreplay.testing.synth_content import TextPool, build_pools, gzip_body, jpeg, mp4, png
from capreplay.util.files import write_atomic

INDEX_FILE = "index.cdxj"
RECORDS_PER_FILE = 25_000
"""WARC files rotate after this many responses (about 170 MB), as crawlers rotate at a size limit."""
USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0"
MAX_BODY = 4 << 20
"""Bodies are capped so a log-normal tail never makes one record dominate the archive."""

Scheme = Literal["http", "https"]


@dataclass(frozen=True)
class Kind:
    """One kind of resource: its share of records, stored-size distribution and where it is served."""

    name: str
    share: float
    median: int
    """Median stored body size in bytes (after Content-Encoding)."""
    sigma: float
    """Log-normal shape: the mean is ``median * exp(sigma**2 / 2)``."""
    content_type: str
    roles: tuple[str, ...]
    """Host roles that serve it (``www``, ``static``, ``img``, ``api``, ``cdn``)."""
    encoded: float = 0.0
    """Share of these responses stored with ``Content-Encoding: gzip``."""


KINDS = (
    Kind("html", 0.14, 7_300, 0.8, "text/html; charset=utf-8", ("www",), encoded=0.75),
    Kind("redirect", 0.01, 0, 0.0, "text/html; charset=utf-8", ("www",)),
    Kind("css", 0.10, 3_600, 1.0, "text/css", ("static", "cdn"), encoded=0.75),
    Kind("js", 0.20, 4_500, 1.1, "application/javascript", ("static", "cdn"), encoded=0.75),
    Kind("png", 0.15, 2_700, 1.2, "image/png", ("img", "cdn")),
    Kind("jpeg", 0.20, 2_700, 1.2, "image/jpeg", ("img", "cdn")),
    Kind("json", 0.20, 900, 1.0, "application/json", ("api",), encoded=0.5),
)
VIDEO = Kind("video", 0.0, 8 << 20, 0.0, "video/mp4", ("cdn",))
"""Large media, only added on request (``large=``): bodies bigger than a loopback socket's buffers, so a
client that goes away mid-response really does leave the server in the middle of writing."""
ROLES = ("www", "static", "img", "api", "cdn")
_SECTIONS = ("news", "shop", "blog", "docs", "help", "about", "products", "category")


@dataclass(frozen=True)
class Planned:
    """One response to write: everything but its bytes, which come from a generator seeded by ``number``."""

    number: int
    kind: Kind
    url: str
    host: str
    size: int
    encoded: bool


def host_names(count: int) -> list[str]:
    """``count`` hosts: the five roles of site 00, then of site 01, ... (``www.site00.test``, ...)."""
    return [f"{ROLES[i % len(ROLES)]}.site{i // len(ROLES):02d}.test" for i in range(count)]


def plan(
    records: int, seed: int, *, hosts: int = 50, scheme: Scheme = "https", large: int = 0, body_scale: float = 1.0
) -> list[Planned]:
    """The responses of a snapshot, in capture order: kinds, hosts, URLs and stored sizes; ``large`` 8 MiB
    videos come last, after the ``records`` others. ``body_scale`` shrinks (or grows) every body, for tests
    that need many records but not their bytes."""
    if records < 1 or hosts < 1:
        raise InputError("a synthetic snapshot needs at least one record and one host")
    rng = random.Random(f"plan:{seed}")
    names = host_names(hosts)
    # Sites differ in size (a few large, many small), as crawls of real sites do.
    site_weight = {name: 1 / (1 + i // len(ROLES)) ** 0.8 for i, name in enumerate(names)}
    by_kind: dict[str, tuple[list[str], list[float]]] = {}
    for kind in KINDS:
        served = [n for n in names if n.split(".", 1)[0] in kind.roles] or names
        by_kind[kind.name] = (served, list(accumulate(site_weight[n] for n in served)))
    kind_weights = list(accumulate(k.share for k in KINDS))
    out = []
    for number in range(records):
        kind = rng.choices(KINDS, cum_weights=kind_weights)[0]
        served, weights = by_kind[kind.name]
        host = rng.choices(served, cum_weights=weights)[0]
        size = 0 if kind.median == 0 else min(int(rng.lognormvariate(math.log(kind.median), kind.sigma)), MAX_BODY)
        size = int(size * body_scale)
        path = _path(rng, kind.name, number)
        out.append(Planned(number, kind, f"{scheme}://{host}{path}", host, size, rng.random() < kind.encoded))
    video_host = next((n for n in names if n.startswith("cdn.")), names[0])
    for number in range(records, records + large):
        url = f"{scheme}://{video_host}/media/clip-{number}.mp4"
        out.append(Planned(number, VIDEO, url, video_host, VIDEO.median, False))
    return out


def _path(rng: random.Random, kind: str, number: int) -> str:
    """A path (and sometimes a query) for the ``number``-th response; ``number`` makes it unique."""
    word = rng.choice(_SECTIONS)
    tag = format(rng.getrandbits(32), "08x")
    if kind in ("html", "redirect"):
        path = f"/{word}/item-{number}" + (".html" if rng.random() < 0.5 else "")
        return path + (f"?page={rng.randint(2, 40)}&sort=price" if rng.random() < 0.25 else "")
    if kind in ("css", "js"):
        return f"/assets/{kind}/{word}-{number}.{tag}.{kind}" + (
            f"?v={rng.randint(1, 9)}" if rng.random() < 0.2 else ""
        )
    if kind in ("png", "jpeg"):
        ext = "png" if kind == "png" else "jpg"
        path = f"/images/{tag[:2]}/{tag[2:4]}/{word}-{number}-{rng.randint(64, 1600)}w.{ext}"
        return path + ("?w=640&q=80" if rng.random() < 0.1 else "")
    return f"/api/v1/{word}?id={number}&lang=en" + (f"&page={rng.randint(1, 9)}" if rng.random() < 0.5 else "")


def exchange(item: Planned, seed: int, started: datetime, pools: dict[str, TextPool], pages: list[str]) -> Exchange:
    """The archived exchange for ``item``: realistic browser request headers, server response headers."""
    rng = random.Random(seed * 10_000_019 + item.number)
    kind = item.kind
    status, reason, body = 200, "OK", b""
    extra: list[tuple[str, str]] = []
    if kind.name == "redirect":
        status, reason = 301, "Moved Permanently"
        extra.append(("Location", rng.choice(pages) if pages else "/"))
    elif kind.name in ("png", "jpeg"):
        body = (png if kind.name == "png" else jpeg)(rng, item.size)
    elif kind.name == "video":
        body = mp4(rng, item.size)
    else:
        pool = pools[kind.name]
        target = int(item.size * pool.gzip_ratio) if item.encoded else item.size
        text = pool.cut(rng, target)
        if kind.name == "html":
            text = _html(rng, item, text, pages)
        elif kind.name == "json":
            text = f'{{"id":{item.number},"items":[{text}]}}'
        body = gzip_body(text) if item.encoded else text.encode()
        if item.encoded:
            extra.append(("Content-Encoding", "gzip"))
        extra.append(("Vary", "Accept-Encoding"))
    cacheable = kind.name in ("css", "js", "png", "jpeg")
    response_headers = [
        ("Date", format_datetime(started, usegmt=True)),
        ("Server", "nginx"),
        ("Content-Type", kind.content_type),
        ("Content-Length", str(len(body))),
        ("Cache-Control", "public, max-age=31536000, immutable" if cacheable else "no-cache"),
        ("ETag", f'"{rng.getrandbits(64):016x}"'),
        ("Last-Modified", format_datetime(started - timedelta(days=rng.randint(1, 900)), usegmt=True)),
        *extra,
    ]
    if kind.name == "json":
        response_headers.append(("Access-Control-Allow-Origin", "*"))
    request_headers = [
        ("Host", item.host),
        ("User-Agent", USER_AGENT),
        ("Accept", _ACCEPT.get(kind.name, "*/*")),
        ("Accept-Encoding", "gzip, deflate, br"),
        ("Accept-Language", "en-US,en;q=0.9"),
    ]
    if kind.name not in ("html", "redirect") and pages:
        request_headers.append(("Referer", rng.choice(pages)))
    return Exchange(
        url=item.url,
        method="GET",
        request_headers=request_headers,
        request_body=b"",
        http_version="HTTP/1.1",
        status=status,
        reason=reason,
        response_headers=response_headers,
        response_body=body,
        started=started,
        server_ip=f"192.0.2.{1 + hash_host(item.host) % 254}",
    )


_ACCEPT = {
    "html": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "redirect": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "css": "text/css,*/*;q=0.1",
    "png": "image/avif,image/webp,image/apng,image/*,*/*;q=0.8",
    "jpeg": "image/avif,image/webp,image/apng,image/*,*/*;q=0.8",
    "json": "application/json, text/plain, */*",
}


def hash_host(host: str) -> int:
    """A stable small number for a host (``hash()`` of a str changes from run to run)."""
    return sum(host.encode()) * 31 + len(host)


def _html(rng: random.Random, item: Planned, text: str, pages: list[str]) -> str:
    title = f"Item {item.number}"
    links = "".join(f'<li><a href="{rng.choice(pages)}">related</a></li>' for _ in range(3)) if pages else ""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<link rel="stylesheet" href="/assets/site.css"></head><body><h1>{title}</h1>'
        f"<main>{text}</main><ul>{links}</ul></body></html>"
    )


def frozen_time(seed: int) -> datetime:
    """The capture time of the snapshot of ``seed``: a fixed day of 2026, derived from the seed."""
    return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=seed % 365)


def _record_ids(seed: int, number: int) -> tuple[str, str]:
    rng = random.Random(f"ids:{seed}:{number}")
    return (
        f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128), version=4)}>",
        f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128), version=4)}>",
    )


def write_archive(
    root: Path, items: list[Planned], seed: int, *, per_file: int = RECORDS_PER_FILE, workers: int = 1
) -> list[str]:
    """Write the WARCs of ``items`` under ``root/archive/``; returns their paths relative to ``root``.

    Each file depends only on its own items, so ``workers`` processes may write files side by side; the
    bytes do not depend on how many did.
    """
    pages = [i.url for i in items if i.kind.name == "html"]
    jobs = [
        (root, items[first : first + per_file], seed, first // per_file, pages)
        for first in range(0, len(items), per_file)
    ]
    if workers <= 1 or len(jobs) == 1:
        return [_write_file(*job) for job in jobs]
    # spawn, not fork: the caller may run threads (an event loop's executor), which fork would copy half-way.
    with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(_write_file, *zip(*jobs, strict=True)))


def _write_file(root: Path, items: list[Planned], seed: int, ordinal: int, pages: list[str]) -> str:
    rel = f"archive/data-{ordinal:05d}.warc.gz"
    pools = build_pools(seed)
    start = frozen_time(seed)
    info_id = _record_ids(seed, -1 - ordinal)[0]
    with WarcAppender(root / rel) as out:
        fields = {
            "software": f"capreplay/{version('capreplay')} synthetic",
            "format": "WARC File Format 1.1",
            "random-seed": str(seed),
        }
        out.append(warcinfo_record(fields, record_id=info_id, date=format_warc_date(start), filename=rel))
        for item in items:
            # 37 ms apart: a 100,000-response crawl spans about an hour, as a real one might.
            started = start + timedelta(milliseconds=37 * item.number)
            ex = exchange(item, seed, started, pools, pages)
            request, response = exchange_records(ex, warcinfo_id=info_id, record_ids=_record_ids(seed, item.number))
            out.append(request)
            out.append(response)
    return rel


def generate_snapshot(
    root: Path,
    records: int,
    seed: int = 0,
    *,
    hosts: int = 50,
    scheme: Scheme = "https",
    per_file: int = RECORDS_PER_FILE,
    workers: int = 1,
    large: int = 0,
    body_scale: float = 1.0,
) -> Manifest:
    """Write a complete, verifiable snapshot of ``records`` synthetic responses (plus ``large`` 8 MiB
    videos) into the new folder ``root``; ``workers`` processes write WARC files side by side."""
    if root.exists() and any(root.iterdir()):
        raise InputError("already exists and is not an empty folder", root)
    items = plan(records, seed, hosts=hosts, scheme=scheme, large=large, body_scale=body_scale)
    files = write_archive(root, items, seed, per_file=per_file, workers=workers)
    # the ready responses are made in the index's pass, as a capture makes them, and placed once the manifest
    # names the snapshot: a benchmark's first server finds them whole
    with IndexWithReady(root, files) as built:
        write_atomic(root / INDEX_FILE, built.index.data)
        manifest = _manifest(root, items, seed, records, hosts, scheme, large)
        built.place(manifest.snapshot_id, hashlib.sha256(built.index.data).hexdigest())
    return manifest


def _manifest(
    root: Path, items: list[Planned], seed: int, records: int, hosts: int, scheme: Scheme, large: int
) -> Manifest:
    """The generated snapshot's manifest, written."""
    when = frozen_time(seed)
    pages = [
        PageEntry(
            url=i.url,
            final_url=i.url,
            title=f"Item {i.number}",
            status=200,
            captured_at=when + timedelta(milliseconds=37 * i.number),
        )
        for i in items
        if i.kind.name == "html"
    ]
    listed = collect_files(root)
    manifest = Manifest(
        snapshot_id=snapshot_id(listed, pages),
        created=when,
        complete=True,
        tools={"capreplay": version("capreplay"), "warcio": version("warcio"), "generator": "capreplay.testing.synth"},
        browser={
            "name": "synthetic",
            "version": "none",
            "user_agent": USER_AGENT,
            "viewport": {"width": 1280, "height": 800},
        },
        frozen_time=when,
        random_seed=seed,
        plan={"synthetic": {"records": records, "seed": seed, "hosts": hosts, "scheme": scheme, "large": large}},
        pages=pages,
        hosts=sorted({i.host for i in items}),
        files=listed,
    )
    write_manifest(root, manifest)
    return manifest


def url_list(snapshot: Path) -> list[str]:
    """Every archived response URL of ``snapshot``, in capture order, read from its CDXJ index.

    Reads the JSON of each line and nothing else, so a load generator can list 100,000 URLs in well
    under a second without building index entries.
    """
    seq_url = []
    with open(snapshot / INDEX_FILE, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("!"):
                continue
            fields = json.loads(line.split(" ", 2)[2])
            seq_url.append((int(fields["seq"]), str(fields["url"])))
    return [url for _, url in sorted(seq_url)]
