"""What a results folder holds, read into the viewer's site: agent runs and their episodes, the snapshots they
ran on, study runs, offline study results and review sheets. This is the viewer's one reader of files.

A folder that cannot be read does not stop the viewer: it is listed on the front page with the one line that
says what is wrong with it, as the verb that wrote it would say it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from capreplay.agents.run import read_agent_run
from capreplay.archive.index.cdxj import load_index
from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.errors import CapreplayError
from capreplay.judge.run_verdicts import VERDICTS_FILE
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.models.episode import EpisodeRecord
from capreplay.models.workflow import WorkflowTask
from capreplay.report.agents import per_type_png, report_agent_folder
from capreplay.runs.episode_log import read_episodes
from capreplay.runs.folder import RUN_FILE, RUNS
from capreplay.runs.log import read_lines
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.tasks.graph import SiteGraph
from capreplay.util.files import read_model
from capreplay.verify.last import load_last_report
from capreplay.view.episode_page import EpisodeView, render_episode
from capreplay.view.html import esc, shown_path
from capreplay.view.run_page import AgentRunView, render_agent_run, run_status
from capreplay.view.site import Site
from capreplay.view.snapshot_page import SnapshotView, render_snapshot

GRAPH_FILE = "graph.json"


@dataclass(frozen=True)
class Listed:
    """One line of the front page: what it is, where its page is, and a few cells of HTML about it."""

    section: str
    name: str
    path: str | None
    """Its page; None when it could not be read (then ``cells`` says why)."""
    cells: list[str]


@dataclass
class Contents:
    """The site being built and the front page's lines."""

    site: Site
    listed: list[Listed] = field(default_factory=list)
    snapshots: dict[str, str] = field(default_factory=dict)
    """Each snapshot's page by snapshot id."""
    captures: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per snapshot id: the site path of the capture screenshot of each page URL and final URL."""

    def broken(self, section: str, name: str, error: CapreplayError) -> None:
        """List something that could not be read, with its one line."""
        cell = f'<span class="badge bad">unreadable</span> {esc(error.line())}'
        self.listed.append(Listed(section, name, None, [cell]))

    def capture(self, snapshot_id: str) -> Callable[[str], str | None]:
        """The capture-screenshot finder of one snapshot (finds nothing for a snapshot the viewer lacks)."""
        shots = self.captures.get(snapshot_id, {})
        return shots.get


def safe(name: str) -> str:
    """A name as one site path segment: letters, digits, '.', '_' and '-' kept, everything else '_'."""
    out = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
    return out if out.strip(".") else "_"


def add_snapshot(contents: Contents, folder: Path) -> str:
    """The snapshot at ``folder`` added to the site (once per snapshot id); returns its id."""
    manifest = load_manifest(folder)
    sid = manifest.snapshot_id
    if sid in contents.snapshots:
        return sid
    base = f"snapshots/{sid[:16]}"
    path = f"{base}/index.html"
    captures: dict[str, str] = {}
    shots: dict[str, str] = {}
    for n, p in enumerate(manifest.pages):
        if p.screenshot and (folder / p.screenshot).is_file():
            contents.site.file(f"{base}/{p.screenshot}", folder / p.screenshot)
            captures[str(n)] = f"{base}/{p.screenshot}"
            shots.setdefault(p.url, captures[str(n)])
            shots.setdefault(p.final_url, captures[str(n)])
    contents.snapshots[sid] = path
    contents.captures[sid] = shots

    def render() -> str:
        graph_path = folder / GRAPH_FILE
        graph = read_model(graph_path, SiteGraph, invalid="not a crawl graph") if graph_path.is_file() else None
        index = folder / "index.cdxj"
        entries = load_index(index) if index.is_file() else []
        view = SnapshotView(shown_path(folder), path, manifest, entries, graph, captures, load_last_report(sid))
        return render_snapshot(view)

    contents.site.page(path, render)
    pages = f"{len(manifest.pages)} pages, {len(manifest.hosts)} hosts"
    contents.listed.append(Listed("Snapshots", sid[:16], path, [esc(shown_path(folder)), esc(pages)]))
    return sid


def _tasks(tasks_file: str) -> dict[str, WorkflowTask]:
    workflows = load_tasks_file(Path(tasks_file)).workflows
    return {t.id: t for t in workflows.tasks} if workflows else {}


def add_agent_run(contents: Contents, folder: Path) -> None:
    """An agent run's page, its episodes' pages and screenshots, and its snapshot's page."""
    info = read_agent_run(folder)
    base = f"runs/{safe(info.run_id)}"
    path = f"{base}/index.html"
    episodes = read_episodes(folder)
    verdicts_file = folder / VERDICTS_FILE
    verdicts: dict[str, EpisodeVerdict] = {}
    if verdicts_file.exists():
        read = read_lines(verdicts_file, EpisodeVerdict, lambda v: v.episode, "verdict")
        verdicts = {v.episode: v for v in read.records}
    report = report_agent_folder(folder)
    try:
        tasks = _tasks(info.tasks_file)
    except CapreplayError:
        tasks = {}
    snapshot_path = None
    try:
        add_snapshot(contents, Path(info.snapshot))
        snapshot_path = contents.snapshots.get(info.snapshot_id)
    except CapreplayError as e:
        contents.broken("Snapshots", info.snapshot, e)

    def episode_path(record: EpisodeRecord) -> str:
        k = record.key
        return f"{base}/{safe(k.agent)}/{k.repeat}/{safe(k.task)}.html"

    def shot(relative: str) -> str:
        return f"{base}/files/{relative}"

    for record in episodes:
        for step in record.steps:
            if step.screenshot and (folder / step.screenshot).is_file():
                contents.site.file(shot(step.screenshot), folder / step.screenshot)
        view = EpisodeView(episode_path(record), path, info.run_id, record, tasks.get(record.key.task),
                           verdicts.get(record.key.id()), shot, contents.capture(info.snapshot_id))  # fmt: skip
        contents.site.page(view.path, lambda view=view: render_episode(view))  # type: ignore[misc]
    plot_path = None
    if report.metrics is not None:
        plot_path = f"{base}/per_type.png"
        contents.site.data(plot_path, lambda: per_type_png(report))
    run_view = AgentRunView(path, info, report, episodes, verdicts, episode_path, snapshot_path, plot_path)
    contents.site.page(path, lambda: render_agent_run(run_view))
    scores = []
    if report.metrics:
        scores = [f"{a.agent} {a.partial_completion.value:.2f}" for a in report.metrics.agents
                  if a.partial_completion.value is not None]  # fmt: skip
    shown_snapshot = (f'<a href="{esc(snapshot_path)}">{esc(info.snapshot_id[:16])}</a>' if snapshot_path
                      else esc(info.snapshot_id[:16]))  # fmt: skip
    contents.listed.append(Listed("Agent runs", info.run_id, path, [
        run_status(run_view), esc(", ".join(info.agents)), shown_snapshot,
        esc("; ".join(scores) or "–")]))  # fmt: skip


def run_kind(folder: Path) -> str | None:
    """"agents" or "study" by the run's ``run.json``, or None when it has none that says."""
    try:
        data = json.loads((folder / RUN_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return "agents" if data.get("kind") == "agents" else "study"


def add_runs(contents: Contents, results: Path, study: Callable[[Contents, Path], None]) -> None:
    """Every run under ``results/runs``: agent runs here, study runs through ``study``."""
    runs = results / RUNS
    if not runs.is_dir():
        return
    for folder in sorted(p for p in runs.iterdir() if p.is_dir()):
        kind = run_kind(folder)
        try:
            if kind == "agents":
                add_agent_run(contents, folder)
            elif kind == "study":
                study(contents, folder)
        except CapreplayError as e:
            contents.broken("Agent runs" if kind == "agents" else "Study runs", folder.name, e)


def add_benchmark(contents: Contents, folder: Path) -> None:
    """The benchmark at ``folder`` (its tasks file and snapshot) and its snapshot's page."""
    from capreplay.benchmark.roster import application, names
    from capreplay.benchmark.task_files import SNAPSHOT_FOLDER, TASKS_FILE
    from capreplay.tasks.taxonomy import taxonomy
    from capreplay.view.benchmark_page import AppRow, BenchmarkView, coverage, render_benchmark

    workflows = load_tasks_file(folder / TASKS_FILE).workflows
    tasks = workflows.tasks if workflows else []
    snapshot = folder / SNAPSHOT_FOLDER
    manifest = load_manifest(snapshot)
    sid = add_snapshot(contents, snapshot)
    shots = contents.captures.get(sid, {})
    rows = []
    for name in names():
        app = application(name)
        mine = [p for p in manifest.pages if (urlsplit(p.url).hostname or "") == app.host]
        rows.append(AppRow(app, len(mine), shots.get(mine[0].url) if mine else None))
    types = taxonomy()
    found = coverage(tasks, [t.code for t in types.action_types], [t.code for t in types.perception_types])
    path = "benchmark/index.html"
    view = BenchmarkView(shown_path(folder), path, rows, tasks, found, contents.snapshots.get(sid),
                         {t.code: t.name for t in [*types.action_types, *types.perception_types]})  # fmt: skip
    contents.site.page(path, lambda: render_benchmark(view))
    summary = f"{len(rows)} applications, {found.tasks} tasks ({found.cross_site} across sites)"
    contents.listed.append(Listed("Benchmarks", shown_path(folder), path, [esc(summary)]))
