"""Driving wrk through a list of archived URLs: the Lua script, the target file, the run and its summary.

Each target is a ``Host`` header and a request path, so one wrk run can walk through every host of a
snapshot while connecting to one local port (capreplay and the in-memory limit route on ``Host``;
pywb gets ``/coll/<ts>id_/<url>`` paths and any ``Host``). Requests ask for gzip as a browser does,
so every server returns the archived (encoded) bytes rather than decoding them.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

MARKER = "WRK_JSON "

# Requests are formatted once per thread in init(), so request() costs wrk next to nothing.
LUA = r"""
local targets = {}
local n = 0
local i = 0
init = function(args)
  for line in io.lines(args[1]) do
    local tab = line:find("\t", 1, true)
    n = n + 1
    targets[n] = wrk.format("GET", line:sub(tab + 1), {
      ["Host"] = line:sub(1, tab - 1),
      ["Accept-Encoding"] = "gzip, deflate, br",
      ["User-Agent"] = "wrk (capreplay bench)",
    })
  end
  i = tonumber(args[2] or "0") % n
end
request = function()
  i = i % n + 1
  return targets[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
"""


@dataclass(frozen=True)
class WrkResult:
    """One wrk run: throughput, latency percentiles (microseconds) and errors of every kind."""

    requests: int
    duration_us: int
    bytes: int
    connect: int
    read: int
    write: int
    status: int
    """Responses that were not 2xx or 3xx."""
    timeout: int
    p50_us: int
    p90_us: int
    p99_us: int
    max_us: int
    mean_us: float

    @property
    def rps(self) -> float:
        """Requests per second."""
        return self.requests / (self.duration_us / 1e6) if self.duration_us else 0.0

    @property
    def errors(self) -> int:
        """Every failed request: socket errors, timeouts and non-2xx/3xx statuses."""
        return self.connect + self.read + self.write + self.status + self.timeout

    def as_json(self) -> dict[str, float | int]:
        """The raw fields plus rps and errors."""
        return {**asdict(self), "rps": round(self.rps, 1), "errors": self.errors}


def host_path(url: str) -> tuple[str, str]:
    """The ``Host`` header and the request target (path and query) a browser sends for ``url``."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return parts.netloc, path + (f"?{parts.query}" if parts.query else "")


def write_targets(path: Path, targets: Sequence[tuple[str, str]]) -> Path:
    """Write ``host<TAB>path`` lines for the Lua script."""
    path.write_text("".join(f"{host}\t{target}\n" for host, target in targets), encoding="utf-8")
    return path


def write_script(folder: Path) -> Path:
    """The Lua script, written into ``folder``."""
    script = folder / "targets.lua"
    script.write_text(LUA, encoding="utf-8")
    return script


def run_wrk(
    port: int,
    script: Path,
    targets: Path,
    *,
    seconds: float,
    connections: int = 32,
    start: int = 0,
    cpu: str | None = "1",
) -> WrkResult:
    """One closed-loop wrk run against 127.0.0.1:``port`` with one thread, pinned to ``cpu``."""
    command = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds:g}s",
        "--timeout",
        "5s",
        "--latency",
        "-s",
        str(script),
        f"http://127.0.0.1:{port}",
        "--",
        str(targets),
        str(start),
    ]
    if cpu is not None:
        command = ["taskset", "-c", cpu, *command]
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60, check=True)
    for line in out.stdout.splitlines():
        if line.startswith(MARKER):
            return WrkResult(**json.loads(line[len(MARKER) :]))
    raise RuntimeError(f"wrk printed no summary: {out.stdout[-500:]} {out.stderr[-500:]}")
