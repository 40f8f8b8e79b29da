"""Snapshots captured one by one, joined into one snapshot that serves them all.

Each application of the benchmark is captured on its own (its own plan, its own crawl), and the benchmark is one
snapshot, so that a task spanning two applications runs on one replay. Joining keeps every byte: each part's
WARC is copied as it is (renamed ``archive/<part>-NNNNN.warc.gz``), its screenshots and texts are renumbered
after the pages before them, its pages keep their order, and the index is built again over all the WARCs. The
parts must have been captured with the same random seed (the replay has one); the joined snapshot's frozen time
is the first part's. Each part's manifest is checked against its files first.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from capreplay.archive.snapshot.manifest import checked_manifest, collect_files, write_manifest
from capreplay.capture.session import prepare_output
from capreplay.errors import InputError, OutputError, os_reason
from capreplay.models.manifest import Manifest, PageEntry, ReplaySettings, WebSocketCounts, snapshot_id
from capreplay.replay.ready.with_index import IndexWithReady
from capreplay.util.files import write_atomic


def join_snapshots(parts: dict[str, Path], out: Path, *, strict: bool = False,
                   strict_hosts: Collection[str] = ()) -> Manifest:  # fmt: skip
    """Join the snapshots ``parts`` (name -> folder, in the order their pages are listed) into the new ``out``.

    ``strict``: the joined snapshot is replayed without the nearest-query rule (as ``serve --strict``), so a page
    state that was never captured is a miss rather than the nearest state that was; ``strict_hosts``: only these
    hosts are (the others keep the rule, which suits a static page whose scripts read the query).
    """
    prepare_output(out)
    manifests = {name: checked_manifest(folder) for name, folder in parts.items()}
    seeds = {m.random_seed for m in manifests.values()}
    if len(seeds) > 1:
        raise InputError(f"the parts were captured with different random seeds ({sorted(seeds)}); capture them "
                         "with one --seed", where=next(iter(parts.values())))  # fmt: skip
    try:
        pages, archives = _copy(parts, manifests, out)
        graph = _graph(parts)
        if graph is not None:
            (out / "graph.json").write_text(json.dumps(graph, indent=2) + "\n", encoding="utf-8")
        with IndexWithReady(out, archives) as built:
            write_atomic(out / "index.cdxj", built.index.data)
            replay = ReplaySettings(strict=strict, strict_hosts=sorted(strict_hosts))
            manifest = _manifest(out, manifests, pages, replay)
            write_manifest(out, manifest)
            built.place(manifest.snapshot_id, hashlib.sha256(built.index.data).hexdigest())
    except OSError as e:
        raise OutputError(f"cannot write: {os_reason(e)}", e.filename or out) from e
    return manifest


def _copy(parts: dict[str, Path], manifests: dict[str, Manifest], out: Path) -> tuple[list[PageEntry], list[str]]:
    pages: list[PageEntry] = []
    archives: list[str] = []
    (out / "archive").mkdir(parents=True)
    (out / "captures").mkdir()
    for name, folder in parts.items():
        manifest = manifests[name]
        for entry in manifest.files:
            if entry.path.startswith("archive/"):
                target = f"archive/{name}-{entry.path.removeprefix('archive/')}"
                shutil.copyfile(folder / entry.path, out / target)
                archives.append(target)
        for page in manifest.pages:
            moved: dict[str, Any] = {}
            for field in ("screenshot", "text"):
                old = getattr(page, field)
                if old is not None:
                    new = f"captures/{len(pages):04d}{Path(old).suffix}"
                    shutil.copyfile(folder / old, out / new)
                    moved[field] = new
            pages.append(page.model_copy(update=moved))
    return pages, archives


def _graph(parts: dict[str, Path]) -> dict[str, Any] | None:
    graphs = [json.loads((folder / "graph.json").read_text(encoding="utf-8"))
              for folder in parts.values() if (folder / "graph.json").is_file()]  # fmt: skip
    if not graphs:
        return None
    return {key: [item for graph in graphs for item in graph.get(key, [])] for key in ("seeds", "pages", "links")}


def _manifest(out: Path, manifests: dict[str, Manifest], pages: list[PageEntry], replay: ReplaySettings) -> Manifest:
    first = next(iter(manifests.values()))
    files = collect_files(out)
    sockets = [m.websockets for m in manifests.values() if m.websockets is not None]
    counts = WebSocketCounts(connections=sum(s.connections for s in sockets), messages=sum(s.messages for s in sockets),
                             cut=sum(s.cut for s in sockets))  # fmt: skip
    plans = {name: {"snapshot_id": m.snapshot_id, "frozen_time": m.frozen_time.isoformat(), "plan": m.plan}
             for name, m in manifests.items()}  # fmt: skip
    return Manifest(
        snapshot_id=snapshot_id(files, pages),
        created=datetime.now(UTC).replace(microsecond=0),
        complete=all(m.complete for m in manifests.values()),
        tools=first.tools,
        browser=first.browser,
        frozen_time=first.frozen_time,
        random_seed=first.random_seed,
        plan={"parts": plans},
        pages=pages,
        hosts=sorted({host for m in manifests.values() for host in m.hosts}),
        files=files,
        websockets=counts if sockets else None,
        replay=replay,
    )
