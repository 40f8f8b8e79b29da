"""Study runs and offline study results in the viewer."""

from __future__ import annotations

from pathlib import Path

from capreplay.models.study_run import RunInfo
from capreplay.runs.folder import RUN_FILE
from capreplay.util.files import read_model
from capreplay.view.contents import Contents, Listed, safe
from capreplay.view.html import esc, page

OFFLINE_MARKER = "selftest.json"
"""A folder holding this file holds the offline study's results (``capreplay study selftest``)."""


def add_study_run(contents: Contents, folder: Path) -> None:
    """A study run's page."""
    info = read_model(folder / RUN_FILE, RunInfo, invalid="not a study run's run.json")
    path = f"studies/{safe(info.run_id)}/index.html"
    contents.site.page(path, lambda: page(path, f"Study run {info.run_id}", f"<p>{esc(folder)}</p>"))
    contents.listed.append(Listed("Study runs", info.run_id, path, ["", esc(", ".join(info.representations)),
                                                                    str(len(info.planned)), ""]))


def add_offline_study(contents: Contents, folder: Path) -> None:
    """The offline study's results page."""
    path = f"offline/{safe(folder.name)}/index.html"
    contents.site.page(path, lambda: page(path, f"Offline study {folder.name}", f"<p>{esc(folder)}</p>"))
    contents.listed.append(Listed("Offline studies", folder.name, path, ["", ""]))
