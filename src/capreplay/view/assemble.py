"""The whole viewer site of a results folder: its runs, the snapshots they name and those given, its offline
study results and review sheets, and the front page listing them all."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from capreplay.errors import CapreplayError
from capreplay.view.contents import Contents, add_benchmark, add_runs, add_snapshot
from capreplay.view.index_page import INDEX, render_index
from capreplay.view.sheets import SHEET_GLOB, add_sheet
from capreplay.view.site import Site
from capreplay.view.study_contents import OFFLINE_MARKER, add_offline_study, add_study_run


@dataclass(frozen=True)
class ViewInputs:
    """What ``capreplay view`` was asked to show."""

    results: Path
    snapshots: list[Path] = field(default_factory=list)
    """Snapshots to show besides those the runs name."""
    sheets: list[Path] = field(default_factory=list)
    """Review sheets to show besides those found under the results folder."""
    benchmarks: list[Path] = field(default_factory=list)
    """Benchmark folders to show (each with its tasks file and snapshot)."""


def assemble(inputs: ViewInputs) -> Site:
    """Read everything and build the site (pages themselves are made when asked for)."""
    contents = Contents(Site())
    add_runs(contents, inputs.results, add_study_run)
    for marker in sorted(inputs.results.rglob(OFFLINE_MARKER)):
        try:
            add_offline_study(contents, marker.parent)
        except CapreplayError as e:
            contents.broken("Offline studies", str(marker.parent), e)
    for folder in inputs.snapshots:
        try:
            add_snapshot(contents, folder)
        except CapreplayError as e:
            contents.broken("Snapshots", str(folder), e)
    for folder in inputs.benchmarks:
        try:
            add_benchmark(contents, folder)
        except CapreplayError as e:
            contents.broken("Benchmarks", str(folder), e)
    found = sorted(inputs.results.rglob(SHEET_GLOB)) if inputs.results.is_dir() else []
    for sheet in dict.fromkeys([*found, *inputs.sheets]):
        try:
            add_sheet(contents, sheet)
        except CapreplayError as e:
            contents.broken("Review sheets", str(sheet), e)
    listed = list(contents.listed)
    contents.site.page(INDEX, lambda: render_index(str(inputs.results), listed))
    return contents.site
