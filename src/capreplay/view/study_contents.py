"""Study runs and offline study results in the viewer: what a study run folder holds, read into the site.

A study run is read as ``capreplay study report`` reads it (:func:`capreplay.report.study.report_folder` for the
tables and the plots' figures, :func:`~capreplay.report.study.load_run` for the records), plus what the report
does not need: each page session's screenshot under ``screenshots/``, and the question or instruction of each
task from the tasks file the run's registration names, shown only while that file still has the registered
bytes. The run's page, a page per call, both plots and the screenshots become paths of the site; the pages
themselves are made by :mod:`capreplay.view.study_page` and :mod:`capreplay.view.call_page`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from capreplay.errors import CapreplayError
from capreplay.models.task import ActTask, ReadTask
from capreplay.report.plots import tokens_accuracy_png, tokens_per_page_png
from capreplay.report.study import TOKENS_ACCURACY_PNG, TOKENS_PER_PAGE_PNG, RunReport, load_run, report_folder
from capreplay.runs.registration import load_registration
from capreplay.runs.tasks_file import read_tasks_file
from capreplay.study.records import Cell, RunRecord
from capreplay.study.run_files import SCREENSHOTS_DIR
from capreplay.view.act_overlay import png_size
from capreplay.view.call_page import CallView, render_call
from capreplay.view.contents import Contents, Listed, safe
from capreplay.view.html import esc, shown_path
from capreplay.view.offline_contents import OFFLINE_MARKER, add_offline_study
from capreplay.view.study_page import StudyRunView, render_study_run, study_status

__all__ = ["OFFLINE_MARKER", "add_offline_study", "add_study_run"]


def study_tasks(registration: str | None, results: Path) -> tuple[dict[str, ReadTask | ActTask], str | None]:
    """The registered study's tasks by id, from the tasks file the registration names, or none and why not."""
    if registration is None:
        return {}, "the run names no registration"
    try:
        registered = load_registration(registration, results)
        path = Path(registered.tasks_file)
        data, tasks_file = read_tasks_file(path)
    except CapreplayError as e:
        return {}, e.line()
    if hashlib.sha256(data).hexdigest() != registered.inputs.tasks_sha256:
        return {}, f"{path}: changed since registration {registration}"
    if tasks_file.study is None:
        return {}, f"{path}: has no study"
    return {t.id: t for t in tasks_file.study.tasks}, None


def kept_screenshot(folder: Path, record: RunRecord) -> Path | None:
    """The page session's screenshot a call's verdict names, if it is one of the run's own and is there."""
    name = record.verdict.screenshot if record.verdict else None
    if name is None:
        return None
    relative = PurePosixPath(name)
    # The name comes from a file anyone may edit: only a plain file of the run's screenshot folder is shown.
    if relative.parent != PurePosixPath(SCREENSHOTS_DIR) or relative.suffix != ".png" or relative.name.startswith("."):
        return None
    path = folder / SCREENSHOTS_DIR / relative.name
    return path if path.is_file() else None


def _size(path: Path) -> tuple[int, int] | None:
    try:
        with open(path, "rb") as f:
            return png_size(f.read(24))
    except OSError:
        return None


def _listed(view: StudyRunView) -> list[str]:
    spreads = [s for s in view.report.over_repeats if s.kind == "all" and s.mean is not None]
    accuracy = "; ".join(f"{s.representation} {s.mean:.2f}" for s in spreads)
    return [study_status(view.report), esc(", ".join(view.info.representations)),
            f"{view.report.study.recorded}/{view.report.study.planned}", esc(accuracy or "–")]  # fmt: skip


def add_study_run(contents: Contents, folder: Path) -> None:
    """A study run's page, a page per call, its plots and its screenshots."""
    report: RunReport = report_folder(folder)
    info, records, tasks, tokens = load_run(folder)
    base = f"studies/{safe(info.run_id)}"
    path = f"{base}/index.html"
    questions, missing = study_tasks(info.registration, folder.parent.parent)
    task_info = {t.id: t for t in tasks}

    def call_path(cell: Cell) -> str:
        return f"{base}/calls/{cell.repeat}/{safe(cell.task)}/{safe(cell.representation)}.html"

    plots = (f"{base}/{TOKENS_ACCURACY_PNG}", f"{base}/{TOKENS_PER_PAGE_PNG}")
    # Titled as ``capreplay study report`` titles them, so the viewer's plots are the report's own.
    title = f"run {info.run_id}"
    contents.site.data(plots[0], lambda: tokens_accuracy_png(report.pages, f"Tokens against accuracy, {title}"))
    contents.site.data(plots[1], lambda: tokens_per_page_png(report.pages, f"Tokens per page, {title}"))
    by_cell = {r.cell: r for r in records}
    order = [c for c in info.planned if c in by_cell]
    for n, cell in enumerate(order):
        record = by_cell[cell]
        shot = kept_screenshot(folder, record)
        shot_path = f"{base}/{SCREENSHOTS_DIR}/{shot.name}" if shot else None
        if shot is not None and shot_path is not None:
            contents.site.file(shot_path, shot)
        view = CallView(
            path=call_path(cell), run_path=path, run_id=info.run_id, record=record, task=task_info.get(cell.task),
            question=questions.get(cell.task), tokens=tokens.get(cell), screenshot=shot_path,
            previous=call_path(order[n - 1]) if n else None,
            next=call_path(order[n + 1]) if n + 1 < len(order) else None,
        )  # fmt: skip
        contents.site.page(view.path, _render_call(view, shot))
    run_view = StudyRunView(path=path, folder=shown_path(folder), info=info, report=report, records=records,
                            tasks=task_info, questions=questions, questions_missing=missing, call_path=call_path,
                            plots=plots)  # fmt: skip
    contents.site.page(path, lambda: render_study_run(run_view))
    contents.listed.append(Listed("Study runs", info.run_id, path, _listed(run_view)))


def _render_call(view: CallView, shot: Path | None) -> Callable[[], str]:
    """The call's page, with its screenshot's size read when the page is made."""
    return lambda: render_call(view, _size(shot) if shot else None)
