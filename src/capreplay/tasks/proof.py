"""The proof that a task is solvable on the frozen pages: the gold agent runs it, the judge reads what it reached.

For every task, in one gold run through the real harness (:func:`capreplay.agents.run.execute_run`: a fresh
offline Chromium per episode, the gold agent as a subprocess, every request accounted for; tasks with the same
start URL and gold path share one episode, :func:`shared_episodes`) and one judging session on the same snapshot
(:class:`capreplay.judge.ground.Grounding`):

1. ``gold_run``: the gold path replays to an answer;
2. ``on_snapshot``: no request of the episode was missed or blocked;
3. ``values_on_pages``: the answer gives the task's expected values (when it states them), and every value of
   it is on a page the path reached, as the judge reads pages (every frame, open shadow roots, attribute
   values, JSON and text responses); every URL it gives is an archived page;
4. ``evidence_on_pages``: every evidence snippet is on its page, and that page was reached;
5. ``gold_scores_1``: the judge scores the gold answer 1.0;
6. ``mutations``: the gold answer with one output's value changed (:func:`changed_value`) fails every leaf that
   grounds or pins that output (:func:`must_fail`), changes no leaf that does not read it, and fails at least
   one leaf: a rubric that cannot tell a wrong value of an output from the right one does not judge it.

A task passes when all six hold. Checks are pure functions of the episode, the page texts and the verdicts;
running and rendering are at the edges (:func:`prove_tasks`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capreplay.agents.run import agent_spec, execute_run, new_run_info, start_agent_run
from capreplay.judge.claims import Source, find_number, find_text
from capreplay.judge.episode import Judge, judge_episode
from capreplay.judge.fields import as_list, as_text, parse_number
from capreplay.judge.ground import Grounding
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.llm.client import ModelClient
from capreplay.models.episode import EpisodeRecord
from capreplay.models.rubric import ClaimOnPage, NumericRange, Regex, RubricNode, SetMembership, UrlInSnapshot
from capreplay.models.task import TasksFile
from capreplay.models.workflow import LIST_TYPES, URL_TYPES, Workflows, WorkflowTask
from capreplay.runs.episode_log import EpisodeLog
from capreplay.tasks.generation import Mutation, ProofCheck, TaskProof
from capreplay.util.answer_text import normalize_answer
from capreplay.util.files import write_atomic

PROOF_RUN = "proof-run"
"""The gold run's folder inside the proof's work folder."""
CANDIDATES = "candidates.json"
"""The tasks file of the candidates, as the gold agent reads it."""
CHANGED_TEXT = "Zzyzx Changed {name}"
CHANGED_URL = "https://changed.invalid/{name}"
CHANGED_NUMBER_OFFSET = 1_000_003.0
"""Added to a number to change it: far outside any range a task states, and on no page of a fixture."""

Pages = Mapping[str, list[Source] | str]
"""Each reached URL's texts as the judge reads them, or why it could not be rendered."""


# ---------------------------------------------------------------------------------------------- pure checks


def reached_pages(record: EpisodeRecord) -> list[str]:
    """The start URL and every URL a step ended on, each once, in order."""
    return list(dict.fromkeys([record.start_url, *(step.url for step in record.steps)]))


def gold_answer(record: EpisodeRecord) -> dict[str, Any] | str:
    """The gold agent's answer as JSON, or why there is none."""
    if record.status != "answered":
        return f"the gold path did not finish ({record.status}): {record.error or 'no error given'}"
    try:
        data = json.loads(record.answer or "")
    except json.JSONDecodeError as e:
        return f"the gold answer is not JSON: {e.msg}"
    return data if isinstance(data, dict) else "the gold answer is not a JSON object"


def _sources(pages: Pages) -> list[Source]:
    return [source for texts in pages.values() if not isinstance(texts, str) for source in texts]


def _same(given: Any, expected: str | list[str], kind: str) -> bool:
    if isinstance(expected, list):
        have = as_list(given) or []
        return [normalize_answer(str(v)) for v in have] == [normalize_answer(v) for v in expected]
    if kind == "number":
        a, b = parse_number(given), parse_number(expected)
        return a is not None and a == b
    return normalize_answer(str(given)) == normalize_answer(expected)


def value_problems(
    task: WorkflowTask, answer: Mapping[str, Any], pages: Pages, archived: Callable[[str], bool]
) -> list[str]:
    """Why the answer's values are not borne out by the reached pages; empty when they are."""
    problems: list[str] = []
    sources = _sources(pages)
    for url, texts in pages.items():
        if isinstance(texts, str):
            problems.append(f"reached page {url} cannot be read: {texts}")
    for output in task.outputs:
        if output.name not in answer:
            problems.append(f"the gold answer lacks {output.name!r}")
            continue
        value = answer[output.name]
        if task.expected is not None and output.name in task.expected:
            want = task.expected[output.name]
            if not _same(value, want, output.type):
                problems.append(f"{output.name!r} is {value!r} on the frozen pages, not the expected {want!r}")
        items = as_list(value) if output.type in LIST_TYPES else [value]
        for item in items or []:
            text = as_text(item) if not isinstance(item, int | float) else str(item)
            if not text:
                problems.append(f"{output.name!r} holds no value: {item!r}")
            elif output.type in URL_TYPES:
                if not archived(text):
                    problems.append(f"{output.name!r} gives {text}, which is not an archived page")
            elif output.type == "number":
                number = parse_number(text)
                if number is None or find_number(sources, number, 0.0) is None:
                    problems.append(f"{output.name!r} = {text!r} is on no page the gold path reached")
            elif find_text(sources, text) is None:
                problems.append(f"{output.name!r} = {text!r} is on no page the gold path reached")
    return problems


def evidence_problems(task: WorkflowTask, pages: Pages) -> list[str]:
    """Why an evidence snippet is not on its page among the reached ones; empty when every one is."""
    problems = []
    for snippet in task.evidence:
        texts = pages.get(snippet.url)
        if texts is None:
            problems.append(f"the gold path never reaches {snippet.url}, whose evidence the task cites")
        elif isinstance(texts, str):
            problems.append(f"{snippet.url} cannot be read: {texts}")
        elif find_text(texts, snippet.text) is None:
            problems.append(f"the evidence {snippet.text[:80]!r} is not on {snippet.url}")
    return problems


def changed_value(value: Any, kind: str, name: str) -> Any:
    """``value`` changed so that no page holds it and no stated bound or set admits it (lists: the first item)."""
    if kind in LIST_TYPES:
        items = list(value) if isinstance(value, list) else [value]
        single = "url" if kind == "url_list" else "text"
        return [changed_value(items[0] if items else "", single, name), *items[1:]]
    if kind in URL_TYPES:
        return CHANGED_URL.format(name=name)
    if kind == "number":
        number = parse_number(value)
        changed = (number if number is not None else 0.0) + CHANGED_NUMBER_OFFSET
        return int(changed) if changed.is_integer() else changed
    return CHANGED_TEXT.format(name=name)


def reads(leaf: RubricNode, name: str) -> bool:
    """Whether the leaf's check reads output ``name``."""
    check = leaf.check
    return check is not None and (check.field == name or (isinstance(check, ClaimOnPage) and check.url_field == name))


def must_fail(leaf: RubricNode, name: str, changed: Any, kind: str) -> bool:
    """Whether the leaf must fail once output ``name`` holds ``changed``: it grounds the value on a page, or pins it.

    Grounded: a claim on a page about the value, or on the page the value names; a URL that must be archived; a
    pattern on a URL. Pinned: a set of allowed values, a range that excludes the changed number. A pattern on a
    text or a count of a list checks a shape a changed value may keep, so it may pass.
    """
    check = leaf.check
    if check is None or not reads(leaf, name):
        return False
    if isinstance(check, ClaimOnPage | UrlInSnapshot | SetMembership):
        return True
    if isinstance(check, Regex):
        return kind in URL_TYPES
    if isinstance(check, NumericRange):
        number = parse_number(changed)
        low_ok = check.min is None or (number is not None and number >= check.min)
        high_ok = check.max is None or (number is not None and number <= check.max)
        return not (low_ok and high_ok)
    return False


def mutation_result(
    task: WorkflowTask, name: str, changed: Any, gold: EpisodeVerdict, verdict: EpisodeVerdict
) -> Mutation:
    """How the verdict on the changed answer differs from the gold one, against what must fail."""
    kind = task.output(name).type
    before = {leaf.node: leaf.passed for leaf in gold.leaves}
    after = {leaf.node: leaf.passed for leaf in verdict.leaves}
    failed = sorted(node for node, passed in after.items() if not passed)
    expected = sorted(leaf.id for leaf in task.rubric.leaves() if must_fail(leaf, name, changed, kind))
    readers = {leaf.id for leaf in task.rubric.leaves() if reads(leaf, name)}
    changed_elsewhere = [n for n in after if n not in readers and after[n] != before.get(n)]
    passed = verdict.scored and bool(failed) and set(expected) <= set(failed) and not changed_elsewhere
    return Mutation(output=name, value=changed, failed=failed, expected=expected, passed=passed)


def mutation_problem(mutation: Mutation, verdict: EpisodeVerdict) -> str | None:
    """One line on what went wrong with a mutation; None when it behaved."""
    if mutation.passed:
        return None
    if not verdict.scored:
        return f"changing {mutation.output!r} left the answer unscored: {verdict.unscored}"
    if not mutation.failed:
        return f"changing {mutation.output!r} to {mutation.value!r} fails no leaf: the rubric does not check it"
    missed = sorted(set(mutation.expected) - set(mutation.failed))
    if missed:
        return f"changing {mutation.output!r} to {mutation.value!r} still passes {', '.join(missed)}"
    return f"changing {mutation.output!r} changed the verdict of leaves that do not read it"


def _check(name: Any, problems: Sequence[str], ok: str) -> ProofCheck:
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return ProofCheck(name=name, passed=False, detail=problems[0] + more)
    return ProofCheck(name=name, passed=True, detail=ok)


def _verdict_problem(verdict: EpisodeVerdict) -> list[str]:
    if not verdict.scored:
        return [f"the judge could not score the gold answer: {verdict.unscored}"]
    if verdict.score != 1.0:
        failed = [f"{leaf.node} ({leaf.reason})" for leaf in verdict.leaves if not leaf.passed]
        return [f"the judge scores the gold answer {verdict.score}: {'; '.join(failed) or 'no leaf failed'}"]
    return []


# ---------------------------------------------------------------------------------------------- running


def candidates_file(snapshot: Path, workflows: Workflows, where: Path) -> TasksFile:
    """The tasks file of the candidates at ``where``, naming the snapshot by a path relative to it."""
    relative = os.path.relpath(snapshot.resolve(), where.parent.resolve())
    return TasksFile(schema_version=1, description="Candidates of a generated batch, before their proof.",
                     snapshots={workflows.snapshot: relative}, workflows=workflows)  # fmt: skip


def write_tasks_file(path: Path, tasks_file: TasksFile) -> None:
    """Write a tasks file as the project writes them (indented JSON, defaults kept out)."""
    text = tasks_file.model_dump_json(indent=1, exclude_none=True, exclude_defaults=False)
    write_atomic(path, text.encode("utf-8") + b"\n")


def gold_path_key(task: WorkflowTask) -> str:
    """What the gold agent's episode of ``task`` depends on: its start URL and gold path (it reads nothing else)."""
    return json.dumps([task.start_url, [step.model_dump(mode="json") for step in task.gold_path]], sort_keys=True)


def shared_episodes(tasks: Sequence[WorkflowTask]) -> dict[str, str]:
    """Each task's id mapped to the first task with the same :func:`gold_path_key` (itself, when it is the first).

    The replay answers the same requests the same way and the gold agent reads only its path, so tasks that
    differ in their rubric, outputs' checks, expected values or evidence but not in their path get one gold
    episode: the proof's checks of each are then run on that episode.
    """
    first: dict[str, str] = {}
    return {task.id: first.setdefault(gold_path_key(task), task.id) for task in tasks}


async def gold_run(snapshot: Path, workflows: Workflows, work: Path) -> dict[str, EpisodeRecord]:
    """Run every task of ``workflows`` once with the gold agent on the snapshot; records by task id.

    Tasks with the same start URL and gold path share one episode (:func:`shared_episodes`); the shared record
    is written under each of their keys, so ``proof-run/`` holds an episode of every task, as review sheets need.
    """
    work.mkdir(parents=True, exist_ok=True)
    tasks_path = work / CANDIDATES
    write_tasks_file(tasks_path, candidates_file(snapshot, workflows, tasks_path))
    once = workflows.model_copy(update={"repeats": 1})
    specs = {"gold": agent_spec("gold", once, tasks_path)}
    run_dir = work / PROOF_RUN
    shared = shared_episodes(workflows.tasks)
    runs = [task_id for task_id, first in shared.items() if task_id == first]
    info = new_run_info("proof", None, tasks_path, once, snapshot, ["gold"], specs, runs)
    await execute_run(snapshot, start_agent_run(run_dir, info), once, specs, run_dir)
    with EpisodeLog(run_dir) as log:
        ran = {record.key.task: record for record in log.records}
        for task_id, first in shared.items():
            if task_id not in ran and first in ran:
                record = ran[first]
                ran[task_id] = record.model_copy(update={"key": record.key.model_copy(update={"task": task_id})})
                log.append(ran[task_id])
    return ran


@dataclass
class _Session:
    grounding: Grounding
    judge: Judge

    async def pages(self, urls: Sequence[str]) -> dict[str, list[Source] | str]:
        return {url: await self.grounding.sources(url) for url in urls}

    def archived(self, url: str) -> bool:
        record = self.grounding.archived(url)
        return record is not None and (record.status is None or record.status < 400)


async def _prove_one(task: WorkflowTask, record: EpisodeRecord | None, session: _Session) -> TaskProof:
    if record is None:
        check = ProofCheck(name="gold_run", passed=False, detail="the gold run recorded no episode")
        return TaskProof(task=task.id, passed=False, checks=[check], reached=[], answer=None, score=None)
    reached = reached_pages(record)
    answer = gold_answer(record)
    checks = [_check("gold_run", [answer] if isinstance(answer, str) else [], f"{len(record.steps)} steps answered")]
    off = [f"{r.result} {r.method} {r.url}" for r in record.off_snapshot]
    checks.append(_check("on_snapshot", [f"{len(off)} requests off the snapshot, first {off[0]}"] if off else [],
                         f"{len(record.requests)} requests, all answered from the snapshot"))  # fmt: skip
    if isinstance(answer, str):
        return TaskProof(task=task.id, passed=False, checks=checks, reached=reached, answer=None, score=None)
    pages = await session.pages(reached)
    checks.append(_check("values_on_pages", value_problems(task, answer, pages, session.archived),
                         f"{len(task.outputs)} outputs found on {len(reached)} reached pages"))  # fmt: skip
    checks.append(_check("evidence_on_pages", evidence_problems(task, pages),
                         f"{len(task.evidence)} evidence snippets on their pages"))  # fmt: skip
    verdict = await judge_episode(record, task, session.judge)
    checks.append(_check("gold_scores_1", _verdict_problem(verdict), "the judge scores the gold answer 1.0"))
    mutations: list[Mutation] = []
    problems: list[str] = []
    if verdict.scored and verdict.score == 1.0:
        for output in task.outputs:
            changed = changed_value(answer.get(output.name), output.type, output.name)
            record_changed = record.model_copy(update={"answer": json.dumps({**answer, output.name: changed})})
            changed_verdict = await judge_episode(record_changed, task, session.judge)
            mutation = mutation_result(task, output.name, changed, verdict, changed_verdict)
            mutations.append(mutation)
            if (problem := mutation_problem(mutation, changed_verdict)) is not None:
                problems.append(problem)
        checks.append(_check("mutations", problems, f"each of {len(mutations)} changed values fails its leaves"))
    passed = all(c.passed for c in checks) and len(checks) == 6
    return TaskProof(task=task.id, passed=passed, checks=checks, reached=reached, answer=answer,
                     score=verdict.score, mutations=mutations)  # fmt: skip


async def judge_proofs(
    snapshot: Path, workflows: Workflows, records: Mapping[str, EpisodeRecord], judge_client: ModelClient | None
) -> list[TaskProof]:
    """Every task's proof from its gold episode in ``records``, judged in one session on ``snapshot``."""
    async with Grounding(snapshot) as grounding:
        session = _Session(grounding, Judge(grounding, judge_client))
        return [await _prove_one(task, records.get(task.id), session) for task in workflows.tasks]


async def prove_tasks(
    snapshot: Path, workflows: Workflows, work: Path, judge_client: ModelClient | None
) -> list[TaskProof]:
    """The proof of every task of ``workflows`` on ``snapshot``, in task order; the gold run is kept in ``work``."""
    records = await gold_run(snapshot, workflows, work)
    return await judge_proofs(snapshot, workflows, records, judge_client)
