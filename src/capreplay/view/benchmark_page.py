"""The benchmark's page: its applications with a capture screenshot each, its tasks, and their coverage of CAP's
taxonomy. Pure: what was read in, HTML out (:func:`coverage` is the arithmetic, kept apart for the tests)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from capreplay.benchmark.application import Application
from capreplay.models.workflow import WorkflowTask
from capreplay.view.html import badge, definitions, esc, link, page, rel, table


@dataclass(frozen=True)
class AppRow:
    """One application as the page lists it."""

    app: Application
    pages: int
    """Pages of the snapshot on its host."""
    screenshot: str | None
    """The site path of its first page's capture screenshot."""


@dataclass(frozen=True)
class Coverage:
    """How the tasks cover CAP's taxonomy and the benchmark's flows and sites."""

    tasks: int
    cross_site: int
    by_flow: dict[str, int]
    by_sites: dict[int, int]
    actions: list[str]
    """The action codes (AT..) some task covers, in code order."""
    perceptions: list[str]
    missing_actions: list[str]
    missing_perceptions: list[str]


def coverage(tasks: Sequence[WorkflowTask], action_codes: Sequence[str], perception_codes: Sequence[str]) -> Coverage:
    """The coverage of ``tasks`` against the taxonomy's codes."""
    used = {p.code for t in tasks for p in t.covered_points}
    return Coverage(
        tasks=len(tasks),
        cross_site=sum(len(t.sites) >= 2 for t in tasks),
        by_flow=dict(sorted(Counter(t.flow for t in tasks).items())),
        by_sites=dict(sorted(Counter(len(t.sites) for t in tasks).items())),
        actions=[c for c in action_codes if c in used],
        perceptions=[c for c in perception_codes if c in used],
        missing_actions=[c for c in action_codes if c not in used],
        missing_perceptions=[c for c in perception_codes if c not in used],
    )


@dataclass(frozen=True)
class BenchmarkView:
    """Everything the page shows."""

    folder: str
    path: str
    apps: Sequence[AppRow]
    tasks: Sequence[WorkflowTask]
    coverage: Coverage
    snapshot_page: str | None
    names: dict[str, str]
    """CAP code -> its type's name."""


def _apps(view: BenchmarkView) -> str:
    rows = []
    for row in view.apps:
        app = row.app
        shot = (f'<img class=thumb loading=lazy src="{esc(rel(view.path, row.screenshot))}" '
                f'alt="capture of {esc(app.host)}">' if row.screenshot else badge("not in the snapshot", "muted"))
        rows.append([shot, f"<b>{esc(app.name)}</b><div class=small>{esc(app.host)}</div>", esc(app.kind),
                     f"{esc(app.title)} {esc(app.version)}", esc(app.source), esc(app.licence), esc(app.data),
                     str(row.pages)])  # fmt: skip
    return table(["capture", "name", "kind", "application", "installed from", "licence", "data", "pages"], rows)


def _codes(codes: Sequence[str], names: dict[str, str]) -> str:
    return ", ".join(f'<span title="{esc(names.get(c, ""))}">{esc(c)}</span>' for c in codes) or "none"


def _tasks(view: BenchmarkView) -> str:
    rows = [[esc(t.id), esc(t.flow), esc(", ".join(t.sites)), esc(", ".join(p.code for p in t.covered_points)),
             esc(t.description)] for t in view.tasks]  # fmt: skip
    return table(["task", "flow", "sites", "CAP codes", "description"], rows)


def render_benchmark(view: BenchmarkView) -> str:
    """The benchmark's page."""
    c = view.coverage
    snapshot = link(view.path, view.snapshot_page, "its page") if view.snapshot_page else badge("missing", "bad")
    summary = definitions([
        ("folder", esc(view.folder)),
        ("snapshot", snapshot),
        ("tasks", f"{c.tasks}, {c.cross_site} of them spanning two sites or more"),
        ("by flow", esc(", ".join(f"{flow} {n}" for flow, n in c.by_flow.items()))),
        ("by number of sites", esc(", ".join(f"{sites}: {n}" for sites, n in c.by_sites.items()))),
        ("action types covered", f"{len(c.actions)} of {len(c.actions) + len(c.missing_actions)}: "
                                 f"{_codes(c.actions, view.names)}"),
        ("perception types covered", f"{len(c.perceptions)} of {len(c.perceptions) + len(c.missing_perceptions)}: "
                                     f"{_codes(c.perceptions, view.names)}"),
        ("action types no task covers", _codes(c.missing_actions, view.names)),
        ("perception types no task covers", _codes(c.missing_perceptions, view.names)),
    ])  # fmt: skip
    body = (f"{summary}<h2>Applications</h2>{_apps(view)}<h2>Tasks</h2>{_tasks(view)}")
    return page(view.path, "Benchmark", body)
