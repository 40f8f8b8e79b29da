"""Replay benchmark: capreplay serve, the in-memory limit and pywb 2.10 side by side under wrk.

    uv run python scripts/bench_replay.py [--sizes 2000 100000] [--seconds 10] [--rounds 3]
    uv run python scripts/bench_replay.py --sizes 1000000 --rounds 3 --other-rounds 1 --index-rounds 1 \
        --no-one-core-index --servers capreplay limit      # a million records: the others once, no pywb
    uv run python scripts/bench_replay.py --sizes 1000000 --cache DIR ...   # served warm: DIR opened it before

For each size, a synthetic snapshot (``capreplay.testing.synth``, plain-HTTP URLs so every server is
asked over plain HTTP and capreplay matches exactly) is generated once under ``--work``. Then:

- index build, interleaved, ``--rounds`` times: capreplay's index and its ready responses, made in one pass
  (``capreplay.replay.ready.with_index``) in a fresh process, the same for ``--baseline`` (another checkout, with
  its own code), and pywb's ``wb-manager add`` (which copies the WARCs in and indexes them);
- serving, interleaved A B C A B C ...: each round starts each server fresh (start-up time: spawn to first
  successful response), checks a sample of archived bodies byte for byte, warms up, runs wrk
  (``--connections`` connections, one thread, closed loop) through every archived URL in capture order,
  then reads the server's VmRSS and VmHWM.

Servers are pinned to core 0 and wrk to core 1. Medians of the rounds go into a Markdown table on stdout;
every raw figure goes into ``results/bench/replay-<date>.json``. This is a benchmark, not a test: it
asserts nothing, it reports whether the issue's goals were met.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bench_cpu
import bench_report
import bench_servers as servers
from bench_wrk import host_path, run_wrk, write_script, write_targets

from capreplay.testing.synth import frozen_time, generate_snapshot, url_list

SERVER_CPU, CLIENT_CPU = "0", "1"
SAMPLE = 50


def snapshot_for(work: Path, records: int, seed: int) -> Path:
    """The synthetic snapshot of this size and seed under ``work``, generated the first time."""
    path = work / f"synth-{records}-seed{seed}-http"
    if not (path / "manifest.json").is_file():
        shutil.rmtree(path, ignore_errors=True)
        generate_snapshot(path, records, seed, scheme="http", workers=os.cpu_count() or 1)
    return path


def index_builds(
    snapshot: Path,
    work: Path,
    rounds: int,
    pywb_bin: Path | None,
    quiet_wait: float,
    one_core: bool = True,
    baseline: Path | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """capreplay's (and ``baseline``'s, another checkout's) and pywb's index builds, interleaved; pywb's last
    collection is kept for serving."""
    warcs = sorted((snapshot / "archive").glob("*.warc*"))
    out: dict[str, list[dict[str, Any]]] = {"capreplay": [], "capreplay_2cores": [], "pywb": []}
    builders = [("capreplay", None)] + ([("baseline", baseline)] if baseline is not None else [])
    for r in range(rounds):
        for name, tree in builders:
            if one_core:
                bench_cpu.wait_quiet(quiet_wait)
                result = servers.capreplay_index(snapshot, work / "index-check.cdxj", SERVER_CPU, tree)
                out.setdefault(name, []).append(result)
                print(f"  index {name} round {r}: {result['total_s']:.2f} s {_split(result)}", flush=True)
            # the index is built by one process per WARC file: also give it both cores
            bench_cpu.wait_quiet(quiet_wait)
            result = servers.capreplay_index(snapshot, work / "index-check.cdxj", f"{SERVER_CPU},{CLIENT_CPU}", tree)
            out.setdefault(f"{name}_2cores", []).append(result)
            cpu = f", CPU {result['cpu_s']:.2f} s" if "cpu_s" in result else ""
            print(f"  index {name} on 2 cores round {r}: {result['total_s']:.2f} s {_split(result)}{cpu}", flush=True)
        if pywb_bin is not None:
            collections = work / f"pywb-{snapshot.name}"
            shutil.rmtree(collections, ignore_errors=True)
            bench_cpu.wait_quiet(quiet_wait)
            seconds = servers.pywb_add(pywb_bin, collections, warcs, SERVER_CPU)
            out["pywb"].append({"total_s": seconds})
            print(f"  index pywb round {r}: {seconds:.2f} s", flush=True)
    return out


def _split(result: dict[str, Any]) -> str:
    """The index build's two parts: the index itself and the ready responses derived from it."""
    return f"(index {result.get('index_s', 0):.2f} s, ready responses {result.get('ready_s', 0):.2f} s)"


def serve_round(
    name: str, snapshot: Path, work: Path, urls: list[str], args: argparse.Namespace, sample: dict[str, bytes]
) -> dict[str, Any]:
    """Start one server, check it, warm it up, measure it under wrk, read its memory, stop it."""
    stamp = frozen_time(args.seed).strftime("%Y%m%d%H%M%S")
    quiet_at_start = bench_cpu.wait_quiet(args.quiet_wait)  # start-up time is as sensitive to noise as throughput
    if name == "pywb":
        targets = [servers.pywb_target(u, stamp) for u in urls]
        running = servers.start_pywb(work / f"pywb-{snapshot.name}", targets[0], SERVER_CPU)
    else:
        targets = [host_path(u) for u in urls]
        start = servers.start_capreplay if name == "capreplay" else servers.start_limit
        running = start(snapshot, targets[0], SERVER_CPU)
    try:
        by_url = dict(zip(urls, targets, strict=True))
        wrong = [u for u, body in sample.items() if servers.http_get(running.port, *by_url[u]) != (200, body)]
        target_file = write_targets(work / f"targets-{name}.txt", targets)
        script = write_script(work)
        quiet = bench_cpu.wait_quiet(args.quiet_wait)
        if args.warmup > 0:
            run_wrk(
                running.port, script, target_file, seconds=args.warmup, connections=args.connections,
                start=len(targets) // 2, cpu=CLIENT_CPU,
            )  # fmt: skip
        watch = bench_cpu.CpuWatch(running.child.pid)
        watch.start()
        result = run_wrk(
            running.port, script, target_file, seconds=args.seconds, connections=args.connections, cpu=CLIENT_CPU
        )
        cpu = watch.stop()
        memory = running.child.memory()
    finally:
        running.child.close()
    row = {
        "server": name,
        "startup_s": running.startup_s,
        "sample_checked": len(sample),
        "sample_wrong": wrong[:5],
        "wrk": result.as_json(),
        "rss_kib": memory.rss_kib,
        "hwm_kib": memory.hwm_kib,
        "busy_cores_before": [quiet_at_start, quiet],
        "cpu": cpu,
    }
    print(
        f"  {name}: {result.rps:,.0f} req/s p50 {result.p50_us / 1000:.2f} ms p99 {result.p99_us / 1000:.2f} ms "
        f"errors {result.errors} start {running.startup_s:.2f} s RSS {memory.rss_kib // 1024} MB "
        f"(peak {memory.hwm_kib // 1024} MB) sample wrong {len(wrong)}; other load {cpu['foreign_cores']:.2f} cores",
        flush=True,
    )
    return row


def bench_size(records: int, args: argparse.Namespace, pywb_bin: Path | None) -> dict[str, Any]:
    """Everything for one archive size."""
    print(f"== {records:,} records", flush=True)
    snapshot = snapshot_for(args.work, records, args.seed)
    urls = url_list(snapshot)
    archive_bytes = sum(p.stat().st_size for p in (snapshot / "archive").glob("*.warc*"))
    sample = servers.archived_bodies(snapshot, random.Random(args.seed).sample(urls, min(SAMPLE, len(urls))))
    sample = {u: b for u, b in sample.items() if b}  # redirects have no body to compare
    builds = index_builds(snapshot, args.work, args.index_rounds or args.rounds, pywb_bin, args.quiet_wait,
                          one_core=not args.no_one_core_index, baseline=args.baseline)  # fmt: skip
    names = [n for n in args.servers if n != "pywb" or pywb_bin is not None]
    runs = []
    for r in range(args.rounds):
        for name in names:
            if name != "capreplay" and r >= (args.other_rounds or args.rounds):
                continue  # at a million records the others' rounds cost minutes each (the limit loads every body)
            row = serve_round(name, snapshot, args.work, urls, args, sample)
            runs.append({"round": r, **row})
    return {
        "records": records,
        "snapshot": str(snapshot),
        "archive_bytes": archive_bytes,
        "warc_files": len(list((snapshot / "archive").glob("*.warc*"))),
        "index_builds": builds,
        "runs": runs,
        "medians": medians(runs, builds, names),
        "baseline_index": baseline_medians(builds) if args.baseline is not None else None,
    }


def medians(runs: list[dict[str, Any]], builds: dict[str, list[dict[str, Any]]], names: list[str]) -> dict[str, Any]:
    """Per server: the median of each figure over the rounds."""
    out: dict[str, Any] = {}
    for name in names:
        mine = [r for r in runs if r["server"] == name]

        def med(get: Any, rows: list[dict[str, Any]] = mine) -> float:
            return float(statistics.median(get(r) for r in rows))

        built = builds.get(name) or []
        both = builds.get(f"{name}_2cores") or []
        out[name] = {
            "rps": med(lambda r: r["wrk"]["rps"]),
            "p50_ms": med(lambda r: r["wrk"]["p50_us"] / 1000),
            "p99_ms": med(lambda r: r["wrk"]["p99_us"] / 1000),
            "errors": sum(r["wrk"]["errors"] for r in mine),
            "startup_s": med(lambda r: r["startup_s"]),
            # round 0 opens the snapshot for the first time (nothing in the verification cache yet)
            "startup_first_s": next(r["startup_s"] for r in mine if r["round"] == 0),
            "rss_mib": med(lambda r: r["rss_kib"] / 1024),
            "hwm_mib": med(lambda r: r["hwm_kib"] / 1024),
            "index_s": float(statistics.median(b["total_s"] for b in built)) if built else None,
            "index_2cores_s": float(statistics.median(b["total_s"] for b in both)) if both else None,
            # the two parts of capreplay's build: the CDXJ index, then the ready responses derived from it
            "index_only_2cores_s": float(statistics.median(b["index_s"] for b in both))
            if both and "index_s" in both[0]
            else None,
            "ready_2cores_s": float(statistics.median(b["ready_s"] for b in both))
            if both and "ready_s" in both[0]
            else None,
            "sample_wrong": sum(len(r["sample_wrong"]) for r in mine),
            "foreign_cores": med(lambda r: r["cpu"]["foreign_cores"]),
            "server_cores": med(lambda r: r["cpu"]["server_cores"]),
        }
    return out


def baseline_medians(builds: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The baseline checkout's index builds against this one's, measured in the same rounds."""
    out: dict[str, Any] = {}
    for suffix in ("", "_2cores"):
        mine, theirs = builds.get(f"capreplay{suffix}") or [], builds.get(f"baseline{suffix}") or []
        if mine and theirs:
            new, old = (float(statistics.median(b["total_s"] for b in rows)) for rows in (mine, theirs))
            out[f"index{suffix}_s"] = new
            out[f"baseline{suffix}_s"] = old
            out[f"ratio{suffix}"] = new / old
            print(f"  index build{suffix.replace('_', ' on ')}: {new:.2f} s, baseline {old:.2f} s ({new / old:.2f}x)")
            if all("cpu_s" in b for b in mine + theirs):
                new, old = (float(statistics.median(b["cpu_s"] for b in rows)) for rows in (mine, theirs))
                out[f"cpu{suffix}_s"] = new
                out[f"baseline_cpu{suffix}_s"] = old
                out[f"cpu_ratio{suffix}"] = new / old
                print(f"    CPU time (process and workers): {new:.2f} s, baseline {old:.2f} s ({new / old:.2f}x)")
    return out


def main() -> int:
    """Run the benchmark and write its results."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[2000, 100_000])
    p.add_argument("--seconds", type=float, default=10.0, help="measured wrk run per server and round")
    p.add_argument("--warmup", type=float, default=2.0, help="wrk warm-up before each measured run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--quiet-wait", type=float, default=60.0, help="wait up to this long for other load to stop")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--index-rounds", type=int, default=None, help="index builds (default: --rounds)")
    p.add_argument("--other-rounds", type=int, default=None, help="rounds of the limit and pywb (default: --rounds)")
    p.add_argument("--no-one-core-index", action="store_true", help="time the index build on both cores only")
    p.add_argument(
        "--servers", nargs="+", default=["capreplay", "limit", "pywb"], choices=["capreplay", "limit", "pywb"]
    )
    p.add_argument("--work", type=Path, default=Path("/tmp/capreplay-bench"), help="snapshots and collections")
    p.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a checkout of another capreplay commit (git worktree add DIR COMMIT) whose index build is timed "
        "in the same rounds, interleaved, for a ratio",
    )
    p.add_argument("--out", type=Path, default=servers.ROOT / "results" / "bench")
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="serve with this verification and ready-response cache (kept) instead of a fresh one, so that a "
        "snapshot opened or generated with it before is served warm from round 0 (a million records' ready "
        "responses outlast a server's round)",
    )
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.cache is not None:
        os.environ["CAPREPLAY_CACHE_DIR"] = str(args.cache.resolve())
    else:
        # A verification cache of this run's own: each size's first serve opens its snapshot cold.
        os.environ["CAPREPLAY_CACHE_DIR"] = str(args.work / f"cache-{os.getpid()}")
        shutil.rmtree(os.environ["CAPREPLAY_CACHE_DIR"], ignore_errors=True)
    pywb_bin = servers.ensure_pywb() if "pywb" in args.servers else None
    started = datetime.now(UTC)
    results: dict[str, Any] = {
        "meta": bench_report.environment(pywb_bin),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "started": started.isoformat(timespec="seconds"),
        "sizes": [bench_size(n, args, pywb_bin) for n in args.sizes],
    }
    results["goals"] = bench_report.goals(results["sizes"])
    results["seconds"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"replay-{started.strftime('%Y-%m-%dT%H%M')}.json"
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print()
    print(bench_report.markdown(results))
    print(f"\nraw results: {out}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"bench_replay: {e.cmd[0]} failed (exit {e.returncode}): {(e.stderr or '')[-2000:]}") from e
