"""Start one application of the benchmark and say where it listens, until interrupted."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from capreplay.benchmark.roster import application
from capreplay.util.cache_folder import cache_dir


def apps_cache() -> Path:
    """Where installed applications are kept between builds: ``<capreplay's cache folder>/benchmark``."""
    return cache_dir() / "benchmark"


def serve_application(name: str, work: Path, *, say: Callable[[str], None] = print) -> None:
    """Install (once) and start the application ``name`` with its files in ``work``; serve until SIGINT/SIGTERM.

    The first line said is one JSON object: the application's name, host, local URL and capture ``--map``
    values.
    """
    app = application(name)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with app.start(apps_cache(), work) as server:
        say(json.dumps({"name": app.name, "host": app.host, "url": server.url("/"), "port": server.port,
                        "map": app.map_args(server)}))  # fmt: skip
        stop.wait()
