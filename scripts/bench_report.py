"""The replay benchmark's environment record, goal checks and Markdown table. Pure apart from
:func:`environment`, which asks the machine and the tools what they are."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

THROUGHPUT_RATIO = 0.8
"""capreplay's requests per second must be at least this share of the in-memory limit's."""
P99_RATIO = 2.0
"""capreplay's p99 latency may be at most this multiple of the limit's."""
PYWB_FACTOR = 10.0
"""'Far ahead of pywb', read as at least ten times pywb's throughput."""
INDEX_SECONDS = 10.0
"""Index build of 100,000 records."""
STARTUP_SECONDS = 1.0
RSS_MIB = 150.0


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False, cwd=ROOT)
    except OSError:
        return "unavailable"
    return (done.stdout or done.stderr).strip()


def environment(pywb_bin: Path | None) -> dict[str, Any]:
    """Date, machine, versions and the code's git state (a dirty tree is said so)."""
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), "?")
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    mem_kib = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal"))
    system = f"{platform.system()} {platform.release()}"
    dirty = bool(_run(["git", "status", "--porcelain", "--", "src"]))
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} cores ({cpu}), {mem_kib / 2**20:.0f} GiB, {system}",
        "python": platform.python_version(),
        "aiohttp": version("aiohttp"),
        "warcio": version("warcio"),
        "capreplay_git": _run(["git", "rev-parse", "--short", "HEAD"])
        + (" + uncommitted src changes" if dirty else ""),
        # which uncommitted changes: the same hash means the same code was measured
        "src_diff_sha256": hashlib.sha256(_run(["git", "diff", "HEAD", "--", "src"]).encode()).hexdigest()[:16],
        "pywb": _run([str(pywb_bin / "python"), "-c", "import pywb; print(pywb.__version__)"]) if pywb_bin else None,
        "pywb_python": _run([str(pywb_bin / "python"), "--version"]) if pywb_bin else None,
        "wrk": _run(["wrk", "-v"]).splitlines()[0] if _run(["wrk", "-v"]) else "?",
    }


def goals(sizes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each goal of the issue at each size: the figures, the ratio and whether it was met."""
    out: list[dict[str, Any]] = []
    for size in sizes:
        m, n = size["medians"], size["records"]
        cap, limit, pywb = m.get("capreplay"), m.get("limit"), m.get("pywb")
        if cap is None:
            continue

        def add(goal: str, value: float, target: float, met: bool, ratio: float | None = None, n: int = n) -> None:
            out.append(
                {
                    "records": n,
                    "goal": goal,
                    "value": round(value, 3),
                    "target": target,
                    "ratio": None if ratio is None else round(ratio, 3),
                    "met": met,
                }
            )

        if limit:
            ratio = cap["rps"] / limit["rps"]
            add(
                "throughput >= 0.8x limit (req/s)",
                cap["rps"],
                THROUGHPUT_RATIO * limit["rps"],
                ratio >= THROUGHPUT_RATIO,
                ratio,
            )
            ratio = cap["p99_ms"] / limit["p99_ms"]
            add("p99 <= 2x limit (ms)", cap["p99_ms"], P99_RATIO * limit["p99_ms"], ratio <= P99_RATIO, ratio)
        if pywb:
            ratio = cap["rps"] / pywb["rps"]
            add("far ahead of pywb (>= 10x req/s)", cap["rps"], PYWB_FACTOR * pywb["rps"], ratio >= PYWB_FACTOR, ratio)
        for label, seconds in (("1 core", cap["index_s"]), ("2 cores", cap.get("index_2cores_s"))):
            if seconds is not None:
                ratio = pywb["index_s"] / seconds if pywb and pywb["index_s"] else None
                add(f"index build <= 10 s, {label} (s; ratio = pywb / capreplay)", seconds, INDEX_SECONDS,
                    seconds <= INDEX_SECONDS, ratio)  # fmt: skip
        add(
            "first response < 1 s after start, snapshot opened before (s)",
            cap["startup_s"],
            STARTUP_SECONDS,
            cap["startup_s"] < STARTUP_SECONDS,
        )
        first = cap.get("startup_first_s")
        if first is not None:
            add("first response < 1 s after start, first open (s)", first, STARTUP_SECONDS, first < STARTUP_SECONDS)
        add("RSS after load < 150 MB (MiB)", cap["rss_mib"], RSS_MIB, cap["rss_mib"] < RSS_MIB)
    return out


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def markdown(results: dict[str, Any]) -> str:
    """The medians as one table per size, then the goals."""
    meta, config = results["meta"], results["config"]
    lines = [
        f"Run {meta['date']} on {meta['machine']}; Python {meta['python']}, aiohttp {meta['aiohttp']}, "
        f"pywb {meta['pywb']} ({meta['pywb_python']}), {meta['wrk']}; capreplay {meta['capreplay_git']}.",
        f"wrk: {config['connections']} connections, 1 thread on core 1, {config['seconds']:g} s after "
        f"{config['warmup']:g} s warm-up; servers on core 0; plain HTTP; "
        f"medians of {config['rounds']} interleaved rounds.",
        "",
    ]
    for size in results["sizes"]:
        lines += [
            f"**{size['records']:,} records** ({size['archive_bytes'] / 1e6:,.0f} MB of WARC "
            f"in {size['warc_files']} files)",
            "",
            "| server | req/s | p50 ms | p99 ms | errors | start-up s (first) | RSS after load MiB (peak) "
            "| index build s (2 cores) | server CPU (other load), cores |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, m in size["medians"].items():
            lines.append(
                f"| {name} | {m['rps']:,.0f} | {_fmt(m['p50_ms'])} | {_fmt(m['p99_ms'])} | {m['errors']} | "
                f"{_fmt(m['startup_s'])} ({_fmt(m.get('startup_first_s'))}) | "
                f"{m['rss_mib']:,.0f} ({m['hwm_mib']:,.0f}) | "
                f"{_fmt(m['index_s'], 1)} ({_fmt(m.get('index_2cores_s'), 1)}) | "
                f"{m['server_cores']:.2f} ({m['foreign_cores']:.2f}) |"
            )
        lines.append("")
    lines += ["| records | goal | capreplay | target | ratio | met |", "| ---: | --- | ---: | ---: | ---: | --- |"]
    for g in results["goals"]:
        lines.append(
            f"| {g['records']:,} | {g['goal']} | {_fmt(g['value'])} | {_fmt(g['target'])} | "
            f"{_fmt(g['ratio'])} | {'yes' if g['met'] else '**no**'} |"
        )
    return "\n".join(lines)
