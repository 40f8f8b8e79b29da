"""A small study run for the viewer's tests, made by the real study pipeline: a registration of a copy of
tasks.json cut to three representations, the committed study snapshot served offline to Chromium and
browser-use, the real Anthropic SDK over real HTTP to :class:`FakeLLM`, answers scored on the live page.

Two pages (``login`` and ``embed``), eight tasks each, three representations, one repeat: 48 calls. Most
answers are perfect (built as the self-test builds them, from each target's measured record and the session's
own views); the cells of :data:`CHOICES` get another answer, so the run shows every kind of verdict: a click
on another target, an element that is not the target (one inside a cross-site iframe), an answer that names
nothing, wrong READ answers, a reply with no JSON and a failed call.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any, Literal

from capreplay.models.task import ActTask, Representation, StudyPage
from capreplay.runs.registration import register
from capreplay.study.answers.prompt import prompt_texts
from capreplay.study.offline.expected import expected_act
from capreplay.study.page.session import PageSession
from capreplay.study.representations import REPRESENTATIONS
from capreplay.study.run.execute import RunOptions, run_study
from capreplay.testing.fake_llm import Received, Reply
from tests.support.paths import ROOT
from tests.support.study_run import WRONG_ACT, answer_key, fake_llm, study_of

RUN_ID = "view-study"
REGISTRATION = "view-study"
PAGES = ("login", "embed")
REPRESENTATIONS_STUDIED: tuple[Representation, ...] = ("accessibility_tree", "screenshot", "indexed_dom")
CALLS = 2 * 8 * 3
"""Pages x tasks per page x representations, one repeat."""
WRONG_READ = "zzz not on the page"
FAKE_KEY = "sk-ant-dummy-for-the-fake"
"""The key sent to the fake (which ignores it); with a key, the run asks the provider's token counts too."""

Choice = Literal["perfect", "other", "nothing", "wrong", "unparseable", "error"]
CHOICES: dict[tuple[str, str], Choice] = {
    ("login.act.2", "screenshot"): "other",  # the centre of login.act.3's box: a click on another element
    ("login.act.1", "accessibility_tree"): "other",  # login.act.2's role and name: the wrong element, resolved
    ("login.act.1", "indexed_dom"): "nothing",  # an index that is not in the selector map
    ("embed.act.1", "indexed_dom"): "other",  # embed.act.2's index: an element in the cross-site iframe
    ("embed.act.2", "screenshot"): "nothing",  # the bottom right pixel, on no target
    ("embed.act.3", "accessibility_tree"): "unparseable",
    ("embed.read.3", "indexed_dom"): "error",
    ("login.read.2", "accessibility_tree"): "wrong",
    ("login.read.4", "screenshot"): "wrong",
    ("embed.read.1", "screenshot"): "wrong",
}
"""The cells not answered perfectly; every other cell gets the perfect answer. ``other``: the perfect answer of
the page's next ACT task."""


def _tasks_copy(folder: Path) -> Path:
    """A copy of tasks.json with its snapshots named by absolute path and the study cut to three representations."""
    doc = json.loads((ROOT / "tasks.json").read_text())
    doc["snapshots"] = {name: str(ROOT / path) for name, path in doc["snapshots"].items()}
    doc["study"]["protocol"]["representations"] = list(REPRESENTATIONS_STUDIED)
    tasks = folder / "tasks.json"
    tasks.write_text(json.dumps(doc, indent=1))
    return tasks


_MADE: list[tuple[Path, list[Received]]] = []
"""The results folder of the run this test session made, and the requests the fake received (at most one)."""


def make_study_run(folder: Path, received: list[Received] | None = None) -> Path:
    """Register and run the study into ``folder/results`` (runs/view-study); returns the results folder.

    About a minute on two cores, so the run is made once per test session (for the study's geometry tests and
    the viewer's): a later call gets a copy of its registration and run folder. ``received``, if given, gets
    every request the fake model API received.
    """
    if not _MADE:
        got: list[Received] = []
        _MADE.append((_run(folder, got), got))
    made, got = _MADE[0]
    if received is not None:
        received.extend(got)
    results = folder / "results"
    if results == made:
        return results
    # Only what the run wrote: a caller may have added runs of its own to the first folder since.
    shutil.copy2(made.parent / "tasks.json", folder / "tasks.json")
    (results / "registrations").mkdir(parents=True)
    shutil.copy2(made / "registrations" / f"{REGISTRATION}.json", results / "registrations")
    shutil.copytree(made / "runs" / RUN_ID, results / "runs" / RUN_ID)
    return results


def _run(folder: Path, received: list[Received]) -> Path:
    """Register and run the study into ``folder/results``; ``received`` gets every request the fake received."""
    results = folder / "results"
    register(_tasks_copy(folder), results_dir=results, registration_id=REGISTRATION)
    study = study_of(results)
    replies: dict[str, str | Reply] = {}

    async def script_session(page: StudyPage, session: PageSession) -> None:
        # Answers are made per session: indices belong to this load of the page.
        acts = [t for t in study.page_tasks(page.id) if isinstance(t, ActTask)]
        for task in study.page_tasks(page.id):
            for name in REPRESENTATIONS_STUDIED:
                choice = CHOICES.get((task.id, name), "perfect")
                answer: Any
                if isinstance(task, ActTask):
                    aimed = acts[(acts.index(task) + 1) % len(acts)] if choice == "other" else task
                    assert aimed.measured is not None
                    answer = expected_act(aimed, aimed.measured, REPRESENTATIONS[name], session.views).answer
                    if choice == "nothing":
                        answer = WRONG_ACT[name]
                else:
                    answer = {"answer": WRONG_READ if choice == "wrong" else task.answer}
                before, after = prompt_texts(study.protocol, task, name)
                # The last text block of the request: a screenshot's is the text after the image; a text
                # representation's is the whole prompt, the page in it (a READ question's text is the same for
                # every representation, the page is not).
                shown = REPRESENTATIONS[name].render(session.views)
                last = after if isinstance(shown, bytes) else before + shown + after
                replies[last] = ("I cannot tell from this page." if choice == "unparseable"
                                  else Reply(status=500, message="scripted outage") if choice == "error"
                                  else "Here it is:\n" + json.dumps(answer))  # fmt: skip

    def script(received: Received) -> str | Reply:
        return replies[answer_key(received)]

    with fake_llm(script) as fake:
        options = RunOptions(registration=REGISTRATION, run_id=RUN_ID, results=results, base_url=fake.base_url,
                             pages=list(PAGES), repeats=1)  # fmt: skip
        result = asyncio.run(run_study(options, on_session=script_session, api_key=FAKE_KEY))
        received.extend(fake.received)
    summary = result.summary
    assert (summary.called, summary.errors, summary.unparseable, result.page_failures) == (
        CALLS, {"api_status": 1}, 1, []), result  # a prompt the hook did not script fails as a second error
    return results
