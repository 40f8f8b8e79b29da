"""Fidelity benchmark: each real capture of ``../shared/interop/`` replayed by capreplay and by pywb 2.10.

    .venv/bin/python scripts/bench_fidelity.py [--only SUBSTRING ...] [--pywb-rewrite] [--keep DIR]
    .venv/bin/python scripts/bench_fidelity.py --apps [NAME ...] [--no-files]
    .venv/bin/python scripts/bench_fidelity.py --render results/bench/fidelity-<date>.json

For every WARC and WACZ there: ``capreplay import`` into a temporary snapshot; its main page (the first
HTML response, see ``bench_interop``) loaded once by capreplay (``ReplayServer`` and the Chromium
arguments it prints) and once by pywb 2.10 in its own proxy mode (a collection made by ``wb-manager add``
from the original file, Chromium pointed at it with ``--proxy-server``). Both browsers are launched by
``capreplay.browser`` with the snapshot's clock and seed and the same viewport, and load the page as
``load_page`` does. Nothing reaches the internet: capreplay's browser resolves only the snapshot's hosts,
pywb's resolves only the proxy's name, and pywb's log is checked for anything it tried to fetch.

A request counts as missed when the replayer answered "not here": capreplay's miss page, pywb's not-found
page (a marked template), or, where Chromium's ORB hid that page from the browser, the replayer's own log.
Per file and replayer: requests the page made (the browser's own log), served, misses of archived URLs
(a request whose pywb key, SURT with the scheme dropped, is the key of a URL the file holds, and which
was not served), misses of never-archived URLs, the page's status; the share of pixels that differ
between the two screenshots; and every archived URL pywb served that capreplay did not, with the reason
capreplay missed it (``capreplay.verify.miss_reason``). A JSON result goes to
``results/bench/fidelity-<date>.json``, a Markdown table to stdout. This is a benchmark, not a test: it
asserts nothing, it reports whether the issue's goals were met.

``--apps`` adds real applications (``capreplay.testing.apps``: JupyterLab's kernel WebSocket, Gradio's event
stream after a JSON POST, GraphiQL's GraphQL POSTs), each installed from its package, started on 127.0.0.1 and
captured with its plan under its made-up host; the capture's WARC then goes through the same comparison, with
the plan's actions run in both replayers (pywb cannot replay WebSockets: its row says so).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from bench_interop import ROOT, Held, code_version, import_file, interop_files, read_held, short_name
from bench_pages import Outcome, Run, capreplay_classify, load, pywb_classify
from pywb_proxy import make_proxy_collection, proxy_args, pywb_keys

from capreplay.browser.flags import BASE_ARGS
from capreplay.browser.launch import BrowserSettings
from capreplay.capture.plan_file import parse_maps, parse_plan
from capreplay.capture.session import CaptureOptions, capture
from capreplay.errors import CapreplayError
from capreplay.models.capture_plan import Action, PagePlan
from capreplay.replay.app import Served
from capreplay.replay.server import ReplayServer
from capreplay.replay.websocket import CONNECTIONS
from capreplay.testing.apps.catalog import APPS, App
from capreplay.testing.pywb import ToolInstall, ensure_pywb, running_wayback
from capreplay.verify.miss_reason import miss_reason
from capreplay.verify.sameness import pixel_region

NOT_SERVED = ("miss", "blocked", "error")
PYWB_SEED = 0
"""Seed for pywb's browser when capreplay could not import the file (and so gave no seed)."""


def _attach_server_log(run: Run, served: list[Served]) -> None:
    """Add capreplay's own account (rule, nearest archived URL) to each request the browser made.

    A response the browser dropped (Chromium's ORB blocks a 404 page sent for a script, say) reaches the
    page as a network failure; the server's log says whether it was a miss.
    """
    by_url: dict[tuple[str, str], list[Served]] = {}
    for s in served:
        by_url.setdefault((s.method, s.url), []).append(s)
    for outcome in run.outcomes:
        queue = by_url.get((outcome.method, outcome.url))
        if not queue:
            continue
        s = queue.pop(0)
        account = f"{s.result} rule={s.rule}" if s.rule else (f"nearest={s.nearest}" if s.nearest else s.result)
        if outcome.result == "failed":
            outcome.result = "miss" if s.result == "miss" else "served"
            account = f"{outcome.detail}; server: {account}"
        outcome.detail = account


_POSTREQ = re.compile(r'"POST /bench/resource/postreq\?url=([^& ]+)[^"]*" (\d{3})')


def _attach_pywb_log(run: Run, log: str) -> None:
    """The same for pywb: its log says, for each URL, whether its index found a record (200) or not.

    Needed where the browser cannot read pywb's not-found page: ORB drops it as a network failure, or
    passes the 404 on with an empty body (a script or a stylesheet).
    """
    found: dict[str, list[int]] = {}
    for encoded, status in _POSTREQ.findall(log):
        found.setdefault(unquote(encoded), []).append(int(status))
    for outcome in run.outcomes:
        statuses = found.get(outcome.url)
        unread = outcome.result == "failed" or (outcome.result == "served" and (outcome.status or 0) >= 400)
        if unread and statuses:
            outcome.result = "served" if statuses[0] == 200 else "miss"
            outcome.detail = f"{outcome.detail or 'no readable body'}; pywb's index answered {statuses[0]}"


async def replay_capreplay(snapshot: Path, url: str, actions: list[Action] | None = None,
                           probe: str | None = None) -> tuple[Run, dict[str, int]]:  # fmt: skip
    """The page through capreplay's replay server and the arguments it prints, with ``actions`` run on it, and the
    WebSocket messages it played: connections, the server's messages captured and sent, client messages missed."""
    server = ReplayServer(snapshot)
    info = await server.start()
    try:
        manifest = server.store.manifest
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)
        run = await load(settings, url, capreplay_classify, actions, probe=probe)
        _attach_server_log(run, server.served)
        connections = server.app[CONNECTIONS]
        sockets = {"connections": len(connections), "messages": sum(c.captured for c in connections),
                   "served": sum(c.served for c in connections),
                   "client_misses": sum(len(c.client_misses) for c in connections)}  # fmt: skip
        return run, sockets
    finally:
        await server.stop()


def _outside_requests(log: str) -> list[str]:
    """Lines of pywb's log where pywb itself tried to reach a host (it must never need to)."""
    marks = ("NameResolutionError", "Failed to resolve", "HTTPSConnectionPool", "HTTPConnectionPool")
    return [line.strip()[:300] for line in log.splitlines() if any(m in line for m in marks)]


async def replay_pywb(pywb: ToolInstall, archive: Path, held: Held, work: Path, frozen: datetime, seed: int,
                      rewrite: bool, actions: list[Action] | None = None,
                      probe: str | None = None) -> tuple[Run, list[str]]:  # fmt: skip
    """The page through pywb's proxy mode on a collection made from the original file."""
    make_proxy_collection(pywb, work, "bench", archive, rewrite=rewrite, timestamp=held.main_timestamp)
    with running_wayback(pywb, work) as wayback:
        settings = BrowserSettings([*proxy_args(wayback.port), *BASE_ARGS], frozen, seed)
        assert held.main_page is not None
        run = await load(settings, held.main_page, pywb_classify, actions, probe=probe)
    log = wayback.log.read_text(errors="replace")
    _attach_pywb_log(run, log)
    return run, _outside_requests(log)


class Kinds:
    """What the archive holds of a URL, by pywb's key: the URL itself, its host and path, or nothing."""

    def __init__(self, held: Held, keys: dict[str, str | None]) -> None:
        self.keys = keys
        archived = {keys.get(u) for u in held.urls}
        self.archived = {k for k in archived if k is not None}
        self.paths = {k.split("?", 1)[0] for k in self.archived}

    def __call__(self, url: str) -> str:
        key = self.keys.get(url)
        if key is None:
            return "never"
        if key in self.archived:
            return "archived"
        return "same-path" if key.split("?", 1)[0] in self.paths else "never"


def _counts(run: Run, kind: Kinds) -> dict[str, Any]:
    misses = [kind(o.url) for o in run.outcomes if o.result in NOT_SERVED]
    return {
        "requests": len(run.outcomes),
        "served": sum(o.result == "served" for o in run.outcomes),
        "archived_misses": misses.count("archived"),
        "same_path_misses": misses.count("same-path"),
        "never_archived_misses": misses.count("never"),
        "other": sum(o.result in ("failed", "pending") for o in run.outcomes),
        "status": run.status,
        "error": run.error,
        "loads": run.loads(),
    }


def _reason(url: str, kind: str, held_urls: list[str], outcome: Outcome | None,
            pywb_detail: str | None = None) -> dict[str, Any]:  # fmt: skip
    """One shortfall: the URL, what the archive holds of it, capreplay's answer and the likely reason."""
    found = miss_reason(url, held_urls)
    if found:
        reason = found.reason
    elif outcome is None:
        reason = "not-requested"  # capreplay's page never asked for it: the pages took other paths
    elif kind == "archived":
        reason = "same-pywb-key"  # equal only under pywb's canonical form (SURT, www. and scheme dropped)
    else:
        reason = "pywb-fuzzy-rule"  # nothing close by path: pywb's own fuzzy rules found something
    return {
        "url": url,
        "kind": kind,
        "capreplay": None if outcome is None else {"result": outcome.result, "status": outcome.status,
                                                   "detail": outcome.detail},
        "reason": reason,
        "nearest": found.nearest if found else None,
        "pywb": pywb_detail,
    }


def compare(held: Held, cap: Run | None, pywb_run: Run, keys: dict[str, str | None]) -> dict[str, Any]:
    """Everything the table reports for one file, from the two runs and pywb's keys."""
    kind = Kinds(held, keys)
    out: dict[str, Any] = {"pywb": _counts(pywb_run, kind)}
    # pywb's fuzzy rules serve some URLs it does not hold by key: those count here too, with their kind
    pywb_served = {keys.get(o.url): o for o in pywb_run.outcomes if o.result == "served"}
    cap_by_key: dict[str | None, Outcome] = {}
    for o in cap.outcomes if cap else []:
        if o.result == "served" or keys.get(o.url) not in cap_by_key:
            cap_by_key[keys.get(o.url)] = o
    out["capreplay"] = _counts(cap, kind) if cap else None
    out["pywb_served_capreplay_missed"] = [
        _reason(o.url, kind(o.url), held.urls, cap_by_key.get(k), o.detail) for k, o in pywb_served.items()
        if k not in cap_by_key or cap_by_key[k].result != "served"
    ]  # fmt: skip
    if cap is None:
        return out
    out["capreplay_archived_misses"] = [
        _reason(o.url, kind(o.url), held.urls, o) for o in cap.outcomes
        if o.result in NOT_SERVED and kind(o.url) != "never"
    ]  # fmt: skip
    if cap.screenshot and pywb_run.screenshot:
        region = pixel_region(cap.screenshot, pywb_run.screenshot)
        out["pixels_differ"] = round(region.fraction, 6)
        out["pixel_box"] = region.box
    return out


async def bench_file(path: Path, pywb: ToolInstall, args: argparse.Namespace, *, name: str | None = None,
                     actions: list[Action] | None = None, app: App | None = None) -> dict[str, Any]:  # fmt: skip
    """Import, replay in both (running ``actions`` on the page), compare; one JSON record. For an ``app``, capreplay
    replays twice (the second compared with the first: DOM and pixels) and each replay is asked whether the
    application's answer is on the page."""
    name = name or short_name(path)
    held = read_held(path)
    record: dict[str, Any] = {"file": name, "main_page": held.main_page, "archived_urls": len(held.urls)}
    if held.main_page is None:
        record["note"] = "no HTML response in the file"
        return record
    with tempfile.TemporaryDirectory(prefix="bench-fidelity-") as tmp:
        imported = import_file(path, Path(tmp, "snapshot"))
        # The temporary folder's name says nothing about the file and would put a machine path in the results.
        record["import"] = {"ok": imported.ok, "message": imported.message.replace(tmp, "a temporary folder")}
        cap: Run | None = None
        frozen = datetime.strptime(held.main_timestamp or "20000101000000", "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        seed = PYWB_SEED
        probe = app.answer_js if app else None
        if imported.ok:
            try:
                cap, record["websockets"] = await replay_capreplay(imported.snapshot, held.main_page, actions, probe)
                if app is not None:
                    again, _ = await replay_capreplay(imported.snapshot, held.main_page, actions, probe)
                    record["replay_again"] = _again(cap, again, app)
            except CapreplayError as e:  # a snapshot the server refuses is a result to report, not a crash
                record["import"] = {"ok": False, "message": f"imported, but serving failed: {e.line()}"}
            manifest = json.loads((imported.snapshot / "manifest.json").read_text())
            seed = int(manifest.get("random_seed", seed))
            frozen = datetime.fromisoformat(manifest["frozen_time"]) if "frozen_time" in manifest else frozen
        pywb_run, outside = await replay_pywb(pywb, path, held, Path(tmp, "pywb"), frozen, seed, args.pywb_rewrite,
                                              actions, probe)  # fmt: skip
        if app is not None:
            record["shows"] = {"capreplay": cap is not None and app.shows in cap.answer,
                               "pywb": app.shows in pywb_run.answer}  # fmt: skip
        record["pywb_reached_outside"] = outside
        requested = [o.url for run in (cap, pywb_run) if run is not None for o in run.outcomes]
        keys = pywb_keys(pywb, [*held.urls, *requested])
        record.update(compare(held, cap, pywb_run, keys))
        record["runs"] = {"capreplay": cap.summary() if cap else None, "pywb": pywb_run.summary()}
        if args.keep:
            _keep(args.keep / name.replace("/", "+"), cap, pywb_run)
    return record


async def bench_app(name: str, pywb: ToolInstall, args: argparse.Namespace) -> dict[str, Any]:
    """Start a real application from its package, capture its plan, and compare the two replays of that WARC."""
    app = APPS[name]
    label = f"app:{name}"
    with tempfile.TemporaryDirectory(prefix="bench-app-") as tmp:
        snapshot = Path(tmp, "snapshot")
        with app.start(ROOT / ".cache", Path(tmp, "app")) as server:
            plan, maps = parse_plan(app.plan(), name), parse_maps(app.map_args(server))
            result = await capture(CaptureOptions(out=snapshot, plan=plan, maps=maps, progress=False))
        warcs = sorted((snapshot / "archive").glob("*.warc.gz"))
        if result.failed or len(warcs) != 1:
            failed = "; ".join(result.failed) or f"{len(warcs)} WARC files"
            return {"file": label, "traffic": app.traffic, "note": f"capture failed: {failed}"[:300]}
        actions = PagePlan.model_validate(app.plan()["pages"][0]).actions
        record = await bench_file(warcs[0], pywb, args, name=label, actions=actions, app=app)
    record["traffic"] = app.traffic
    if "WebSocket" in app.traffic:
        record["remark"] = "pywb cannot replay WebSockets"
    return record


def _again(first: Run, second: Run, app: App) -> dict[str, Any]:
    """A second capreplay replay against the first: the same DOM, the share of pixels that differ, the answer."""
    both = first.screenshot and second.screenshot
    same = pixel_region(first.screenshot, second.screenshot).fraction if both else None
    return {"dom_identical": first.dom == second.dom, "pixels_differ": same, "shows": app.shows in second.answer}


def app_table(records: list[dict[str, Any]]) -> str:
    """The real applications: what each replayer served and showed, and two capreplay replays compared."""
    head = ["application", "traffic", "req", "served", "misses", "answer shown", "WebSocket messages served",
            "pixels vs. replay before", "DOM vs. replay before", "pywb req", "pywb served", "pywb misses",
            "pywb answer shown", "pixels capreplay vs. pywb"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        if not r["file"].startswith("app:"):
            continue
        if "pywb" not in r:
            lines.append(f"| {r['file']} | {r.get('traffic', '-')} | " + r.get("note", "-") + " |" * (len(head) - 2))
            continue
        cap, ref, again, ws = r.get("capreplay") or {}, r["pywb"], r.get("replay_again") or {}, r.get("websockets")
        sockets = f"{ws['served']}/{ws['messages']}" if ws and ws["connections"] else "none opened"
        pywb_shows = _yes(r.get("shows", {}).get("pywb"))
        if r.get("remark"):
            pywb_shows += f" ({r['remark']})"
        frac = again.get("pixels_differ")
        cells = [r["file"].removeprefix("app:"), r.get("traffic", "-"), str(cap.get("requests", "-")),
                 str(cap.get("served", "-")), _misses(cap), _yes(r.get("shows", {}).get("capreplay")), sockets,
                 "-" if frac is None else f"{frac:.2%}", "identical" if again.get("dom_identical") else "differs",
                 str(ref["requests"]), str(ref["served"]), _misses(ref), pywb_shows,
                 f"{r['pixels_differ']:.2%}" if "pixels_differ" in r else "-"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _misses(counts: dict[str, Any]) -> str:
    return str(counts["requests"] - counts["served"]) if counts else "-"


def _yes(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _keep(folder: Path, cap: Run | None, pywb_run: Run) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for label, run in (("capreplay", cap), ("pywb", pywb_run)):
        if run is not None:
            (folder / f"{label}.png").write_bytes(run.screenshot)
            (folder / f"{label}.html").write_text(run.dom)


def _side(c: dict[str, Any] | None) -> list[str]:
    if c is None:
        return ["-"] * 6
    status = str(c["status"]) if c["loads"] else f"fails ({c['error'] or c['status']})"
    counts = ("requests", "served", "archived_misses", "same_path_misses", "never_archived_misses")
    return [*(str(c[k]) for k in counts), status[:40]]


def table(records: list[dict[str, Any]]) -> str:
    """The Markdown table, then each shortfall with its reason, then the goals."""
    head = ["file", "req", "served", "arch. miss", "same-path miss", "never-arch. miss", "status",
            "pywb req", "pywb served", "pywb arch. miss", "pywb same-path miss", "pywb never-arch.", "pywb status",
            "pixels differ", "pywb-only"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        if "pywb" not in r:
            lines.append(f"| {r['file']} | " + " | ".join([r.get("note", "-")] + ["-"] * (len(head) - 2)) + " |")
            continue
        cap = r.get("capreplay")
        pixels = f"{r['pixels_differ']:.2%}" if "pixels_differ" in r else "-"
        label = f"{r['file']} ({r['remark']})" if r.get("remark") else r["file"]
        cells = [label, *_side(cap), *_side(r["pywb"]), pixels, str(len(r["pywb_served_capreplay_missed"]))]
        if cap is None:
            cells[6] = f"import failed: {r['import']['message'][:60]}"
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Shortfalls: URLs the archive holds (by key, or by host and path) that capreplay did not serve, "
              "and URLs pywb served that capreplay did not:", "",
              "| file | URL | held | capreplay | reason | nearest archived (else what pywb served) | pywb served it |",
              "|---|---|---|---|---|---|---|"]
    for r in records:
        for s, pywb_served in shortfalls(r):
            got = s["capreplay"]["result"] if s["capreplay"] else "not requested"
            nearest = (s["nearest"] or (s.get("pywb") or "-").removeprefix("pywb served "))[:90]
            lines.append(f"| {r['file']} | {s['url'][:110]} | {s['kind']} | {got} | {s['reason']} | {nearest} | "
                         f"{'yes' if pywb_served else 'no'} |")  # fmt: skip
    lines += ["", *goals(records)]
    if any(r["file"].startswith("app:") for r in records):
        lines += ["", app_table(records)]
    return "\n".join(lines)


def shortfalls(record: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
    """capreplay's archived misses and pywb-only URLs of one file, each once, with whether pywb served it."""
    misses = record.get("capreplay_archived_misses", [])
    pywb_only = record.get("pywb_served_capreplay_missed", [])
    served_by_pywb = {s["url"] for s in pywb_only}
    listed = {s["url"] for s in misses}
    return [(s, s["url"] in served_by_pywb) for s in misses] + [(s, True) for s in pywb_only if s["url"] not in listed]


def goals(records: list[dict[str, Any]]) -> list[str]:
    """The issue's three goals, each met or not, with the files that miss it."""
    rows = [r for r in records if "pywb" in r]
    arch = [r["file"] for r in rows if r.get("capreplay") is None or r["capreplay"]["archived_misses"]]
    # a URL capreplay's page never asked for is listed, but is no miss: its page took another path there
    pywb_only = [r["file"] for r in rows if any(s["capreplay"] for s in r["pywb_served_capreplay_missed"])]
    loads = [r["file"] for r in rows if r["pywb"]["loads"] and not (r.get("capreplay") or {}).get("loads")]
    return [f"- zero misses of archived URLs on every file: {_verdict(arch)}",
            f"- no archived URL pywb serves and capreplay misses: {_verdict(pywb_only)}",
            f"- main page loads wherever pywb's does: {_verdict(loads)}"]


def _verdict(failing: list[str]) -> str:
    return "met" if not failing else "not met: " + ", ".join(failing)


async def main_async(args: argparse.Namespace) -> int:
    if args.render:
        print(table(json.loads(args.render.read_text())["files"]))
        return 0
    logging.getLogger("capreplay.replay").setLevel(logging.ERROR)  # misses are counted, not printed one by one
    pywb = ensure_pywb(ROOT / ".cache" / "pywb-2.10")
    files = [f for f in interop_files() if not args.only or any(s in str(f) for s in args.only)]
    files = [] if args.no_files else files
    records = []
    for path in files:
        print(f"== {short_name(path)}", flush=True)
        record = await bench_file(path, pywb, args)
        records.append(record)
        cap, ref = record.get("capreplay"), record.get("pywb")
        print(f"   capreplay {cap and {k: cap[k] for k in ('requests', 'served', 'archived_misses', 'loads')}}; "
              f"pywb {ref and {k: ref[k] for k in ('requests', 'served', 'archived_misses', 'loads')}}", flush=True)
    for name in list(APPS) if args.apps == [] else args.apps or []:
        print(f"== app:{name}", flush=True)
        records.append(await bench_app(name, pywb, args))
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M")
    out = args.out or ROOT / "results" / "bench" / f"fidelity-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "fidelity", "date": stamp, "code": code_version(), "pywb": "2.10.0",
              "pywb_rewrite": args.pywb_rewrite, "files": records}  # fmt: skip
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(table(records))
    print(f"\nwrote {out}")
    return 0


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", default=[], metavar="SUBSTRING", help="files whose path contains this")
    p.add_argument("--pywb-rewrite", action="store_true",
                   help="pywb's default proxy rewriting (bn_: wombat inserted); default: archived bytes (id_)")
    p.add_argument("--apps", nargs="*", choices=sorted(APPS), metavar="NAME",
                   help="also real applications started from their packages (no NAME: all of them)")
    p.add_argument("--no-files", action="store_true", help="leave out the interop files (only the applications)")
    p.add_argument("--keep", type=Path, help="keep both screenshots and DOMs of each file in this folder")
    p.add_argument("--out", type=Path, help="JSON result file (default: results/bench/fidelity-<date>.json)")
    p.add_argument("--render", type=Path, metavar="JSON", help="only print the tables of an earlier result file")
    return p.parse_args(None if argv is None else list(argv))


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main_async(parse_args())))
