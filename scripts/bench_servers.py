"""The three servers of the replay benchmark, started and probed the same way; and their index builds.

- capreplay: the real ``capreplay serve`` command line;
- limit: ``bench_limit_server.py``, the archived responses served from a dict in memory;
- pywb 2.10.0 in ``id_`` mode, in its own virtual environment, on a collection built with ``wb-manager``.

Every server runs pinned to one core (``taskset``); start-up time is from spawning the process to the
first successful response to a real archived URL, polled every 10 ms.
"""

from __future__ import annotations

import ast
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from capreplay.archive.warc.read import read_record
from capreplay.testing.serve_process import ChildServer, capreplay_serve

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(__file__).resolve().parent
PYWB_VENV = ROOT / ".cache" / "pywb-2.10"
PYWB_VERSION = "2.10.0"
COLLECTION = "bench"
ACCEPT_ENCODING = "gzip, deflate, br"  # as a browser asks; pywb decodes bodies for clients that do not


@dataclass
class Running:
    """A started server: its child process, its port and how long it took to answer a first request."""

    name: str
    child: ChildServer
    port: int
    startup_s: float


def http_get(port: int, host: str, target: str, timeout: float = 10.0) -> tuple[int, bytes]:
    """One GET on a fresh connection with the given ``Host``; the status and the raw (undecoded) body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", target, headers={"Host": host, "Accept-Encoding": ACCEPT_ENCODING})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wait_first_response(child: ChildServer, port: int, host: str, target: str, timeout: float = 300.0) -> float:
    """Seconds from spawning ``child`` to its first response below 400 for ``target``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not child.running():
            raise RuntimeError(f"{child.command[0]} exited while starting: {child.stderr_text()[-1000:]}")
        try:
            status, _ = http_get(port, host, target, timeout=5.0)
        except OSError:  # not listening yet (refused), or reset while starting
            time.sleep(0.01)
            continue
        if status < 400:
            return time.monotonic() - child.started_at
        time.sleep(0.01)
    raise RuntimeError(f"no successful response from port {port} within {timeout:.0f} s")


def pinned(cpu: str) -> list[str]:
    """The ``taskset`` prefix that pins a command to ``cpu``."""
    return ["taskset", "-c", cpu]


def start_capreplay(snapshot: Path, first: tuple[str, str], cpu: str) -> Running:
    """``capreplay serve`` (its port from its first JSON line), then the first successful response."""
    child = capreplay_serve(snapshot, prefix=pinned(cpu))
    port = int(child.start(timeout=600)["http_port"])
    return Running("capreplay", child, port, wait_first_response(child, port, *first))


def start_limit(snapshot: Path, first: tuple[str, str], cpu: str) -> Running:
    """The in-memory limit server (loading every body takes a while; that is not what is compared)."""
    child = ChildServer([*pinned(cpu), sys.executable, str(SCRIPTS / "bench_limit_server.py"), str(snapshot)])
    port = int(child.start(timeout=900)["http_port"])
    return Running("limit", child, port, wait_first_response(child, port, *first))


def start_pywb(collections: Path, first: tuple[str, str], cpu: str) -> Running:
    """pywb's ``wayback`` on a free port, serving the collections under ``collections``."""
    port = free_port()
    child = ChildServer(
        [*pinned(cpu), str(PYWB_VENV / "bin" / "wayback"), "-b", "127.0.0.1", "-p", str(port)],
        json_line=False,
        cwd=collections,
    )
    child.start()
    return Running("pywb", child, port, wait_first_response(child, port, *first))


def free_port() -> int:
    """A port that was free a moment ago (wayback cannot pick one itself and report it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def pywb_target(url: str, timestamp: str) -> tuple[str, str]:
    """The ``Host`` and path that ask pywb for ``url`` unchanged (``id_``) near ``timestamp``."""
    return "127.0.0.1", f"/{COLLECTION}/{timestamp}id_/{url}"


def ensure_pywb() -> Path:
    """pywb's ``bin`` folder: the shared install in ``.cache/pywb-2.10`` when present, else installed now."""
    if (PYWB_VENV / "bin" / "wayback").exists():
        return PYWB_VENV / "bin"
    try:
        from capreplay.testing.pywb import ensure_pywb as shared_install
    except ImportError:  # the shared helper is not there: the same install, by hand
        subprocess.run(["uv", "venv", "--python", "3.11", str(PYWB_VENV)], check=True, timeout=300)
        subprocess.run(
            ["uv", "pip", "install", "--python", str(PYWB_VENV / "bin" / "python"), f"pywb=={PYWB_VERSION}"],
            check=True,
            timeout=900,
        )
        return PYWB_VENV / "bin"
    return shared_install(PYWB_VENV).bin_dir


def pywb_add(bin_dir: Path, collections: Path, warcs: list[Path], cpu: str) -> float:
    """``wb-manager init`` a new collection under ``collections``, then time ``wb-manager add`` of ``warcs``
    (it copies the WARCs into the collection and indexes them)."""
    collections.mkdir(parents=True)
    manager = str(bin_dir / "wb-manager")
    subprocess.run([manager, "init", COLLECTION], cwd=collections, check=True, capture_output=True, timeout=120)
    started = time.monotonic()
    subprocess.run(
        [*pinned(cpu), manager, "add", COLLECTION, *map(str, warcs)],
        cwd=collections,
        check=True,
        capture_output=True,
        timeout=1800,
    )
    return time.monotonic() - started


_INDEX_CODE = """
import hashlib, json, os, shutil, sys, time
from pathlib import Path
snapshot, out = Path(sys.argv[1]), Path(sys.argv[2])
# the ready responses go to a cache of this build's own (never the user's), removed afterwards
os.environ["CAPREPLAY_CACHE_DIR"] = str(out.with_name(out.name + ".cache"))
shutil.rmtree(os.environ["CAPREPLAY_CACHE_DIR"], ignore_errors=True)
from capreplay.replay.ready.with_index import IndexWithReady
from capreplay.util.files import write_atomic
def main():
    files = sorted(p.relative_to(snapshot).as_posix() for p in (snapshot / "archive").glob("*.warc*"))
    t0 = time.perf_counter()
    with IndexWithReady(snapshot, files) as built:
        t1 = time.perf_counter()
        write_atomic(out, built.index.data)
        t2 = time.perf_counter()
        stamps = built.place("bench", hashlib.sha256(built.index.data).hexdigest())
    t3 = time.perf_counter()
    shutil.rmtree(os.environ["CAPREPLAY_CACHE_DIR"], ignore_errors=True)
    hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
    # one pass makes both: index_s is the pass and the index's write, ready_s placing the ready responses
    print(json.dumps({"build_s": t1 - t0, "write_s": t2 - t1, "index_s": t2 - t0, "ready_s": t3 - t2,
                      "total_s": t3 - t0, "entries": len(built.index.lines), "ready": stamps.responses if stamps else 0,
                      "hwm_kib": hwm}))
if __name__ == "__main__":
    main()
"""


def capreplay_index(snapshot: Path, out: Path, cpu: str, baseline: Path | None = None) -> dict[str, float]:
    """Time the index build with its ready responses over the snapshot's WARCs (one pass since issue 15's
    item 5; before, ``build_index`` + ``write_index`` and then :func:`capreplay.replay.ready.builder.build_ready`)
    in a fresh process pinned to ``cpu``, writing to ``out`` and next to it (never into the snapshot, whose
    manifest lists its own index). ``baseline``: the checkout of another capreplay commit, timed with its own
    code (its ``src`` and this script's snippet as it was there), for a side-by-side comparison."""
    code, env = _INDEX_CODE, None
    if baseline is not None:
        code = _snippet(baseline / "scripts" / "bench_servers.py")
        env = {**os.environ, "PYTHONPATH": str(baseline / "src")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [*pinned(cpu), sys.executable, "-c", code, str(snapshot), str(out)],
        check=True,
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    # the CPU time of the build's process and its workers (reaped children count into their parent's), which
    # other people's load on the machine stretches far less than the wall time
    result["cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return result


def _snippet(script: Path) -> str:
    """The ``_INDEX_CODE`` string of another checkout's copy of this script."""
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_INDEX_CODE"]:
            return str(ast.literal_eval(node.value))
    raise SystemExit(f"bench: no _INDEX_CODE in {script}")


def archived_bodies(snapshot: Path, urls: list[str]) -> dict[str, bytes]:
    """The archived payload of each of ``urls``, read by the offsets of the snapshot's index."""
    wanted = set(urls)
    places: dict[str, tuple[str, int]] = {}
    with open(snapshot / "index.cdxj", encoding="utf-8") as f:
        for line in f:
            fields = json.loads(line.split(" ", 2)[2])
            if fields["url"] in wanted:
                places.setdefault(fields["url"], (fields["filename"], fields["offset"]))
    bodies = {}
    for url, (filename, offset) in places.items():
        with open(snapshot / filename, "rb") as stream:
            bodies[url] = read_record(stream, offset).payload
    return bodies
