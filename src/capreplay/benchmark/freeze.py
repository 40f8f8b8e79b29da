"""Freeze the benchmark: each application started, captured with its plan, stopped; then the parts joined.

Every application is captured on its own, with a fresh work folder, under its made-up host, by the same
``capture`` that ``capreplay capture --plan benchmark/plans/NAME.json --map HOST=127.0.0.1:PORT --screenshots
webp`` runs; the parts are kept (so a part can be compared with a later build of the same application) and
joined into the benchmark's one snapshot. A part that is not an application (:data:`~capreplay.benchmark.roster.PARTS`:
the shop's Django admin, whose plan saves and deletes records) is captured the same way on a fresh build of its
application, after the applications.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from capreplay.benchmark.roster import part_application
from capreplay.benchmark.start import apps_cache
from capreplay.capture.join import join_snapshots
from capreplay.capture.plan_file import load_plan, parse_maps
from capreplay.capture.session import CaptureOptions, capture, prepare_output
from capreplay.models.manifest import Manifest

PLANS_FOLDER = "plans"
"""Where the benchmark's folder keeps one capture plan per application, ``<name>.json``."""


@dataclass(frozen=True)
class FrozenPart:
    """One application's capture."""

    name: str
    folder: Path
    manifest: Manifest
    failed: list[str]


def freeze_application(name: str, benchmark: Path, out: Path) -> FrozenPart:
    """Start the application of the part ``name`` (:func:`~capreplay.benchmark.roster.part_application`: the
    application itself, or the one a part such as ``shopadmin`` is captured from) on a fresh build, capture it with
    the part's plan into the new snapshot ``out``, stop it."""
    app = part_application(name)
    plan = load_plan(benchmark / PLANS_FOLDER / f"{name}.json")
    prepare_output(out)
    with (
        tempfile.TemporaryDirectory(prefix=f"capreplay-{name}-") as work,
        app.start(apps_cache(), Path(work)) as server,
    ):
        options = CaptureOptions(out=out, plan=plan, maps=parse_maps(app.map_args(server)), progress=False,
                                 screenshots="webp")  # fmt: skip
        result = asyncio.run(capture(options))
    return FrozenPart(name, out, result.manifest, result.failed)


def freeze_benchmark(names: list[str], benchmark: Path, parts: Path, out: Path,
                     *, say: Callable[[str], None] = print) -> Manifest:  # fmt: skip
    """Freeze each application or part into ``parts/<name>`` and join them all into the new snapshot ``out``, where
    every application but the static ones is replayed strictly: an agent that asks for a page state the capture never
    saw gets a miss, not the nearest state (:attr:`~capreplay.benchmark.application.Application.static`)."""
    prepare_output(out)
    frozen: dict[str, Path] = {}
    for name in names:
        part = freeze_application(name, benchmark, parts / name)
        say(f"{name}: {len(part.manifest.pages)} pages, {len(part.failed)} failed"
            + (f" ({', '.join(part.failed[:3])})" if part.failed else ""))  # fmt: skip
        frozen[name] = part.folder
    strict = sorted({part_application(name).host for name in names if not part_application(name).static})
    return join_snapshots(frozen, out, strict_hosts=strict)
