"""Agent benchmark: gold episodes per minute with 1, 2 and 4 browsers on one served snapshot, how the replay server
holds up under them, and the judge's time per task with cached model responses.

    uv run python scripts/bench_agents.py [--tasks tasks.json] [--browsers 1 2 4] [--rounds 2] [--mode MODE]
    uv run python scripts/bench_agents.py --compare-settling [--rounds 3] [--modes MODE...]

- Settling (``--compare-settling``, instead of the rest): every task once per round with the gold agent on one
  browser in each mode (``--modes``): ``network-idle`` as episodes ran before (Playwright's ``networkidle``;
  browser, start page and agent one after another), ``server-quiet`` (the replay server's quiet signal, browser
  and agent launched together), ``server-quiet+ahead`` (what ``capreplay run`` does: also the next episode's
  fresh browser and agent launched while the current one runs). The modes are taken in turn within a round (and
  in the other order the next round). Reported: episodes per minute of each, whether every episode's status and
  answer are the same as the first mode's (the judge's verdict is a function of these), whether every step's
  screenshot is byte-identical to the first mode's (and, where not, how many pixels differ), and where an
  episode's time goes (launch; to the first recorded step: start page, agent start-up; then the steps).

- Episodes: every workflow task once per round with the gold agent, for each browser count, the counts taken in
  turn within a round (1, 2, 4, then 4, 2, 1 ...) so that drift on a shared machine hits them alike. Each episode
  starts its own Chromium, as a real run does, in ``--mode`` (default: what ``capreplay run`` does). Reported:
  episodes per minute, median episode time, and from the server's log of the run: requests, requests per second,
  misses and errors (status >= 500).
- Judge: the gold run of the last round is judged twice, its answers given as JSON (no model call), then as free
  text read by the judge's model: the fake Messages API answers the extraction calls once, through the response
  cache, and the timed pass answers every call from that cache. Reported: seconds per task, median and mean.

Raw figures go to ``results/bench/agents-<date>.json``; medians are printed as Markdown. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import hashlib
import io
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from capreplay.agents.harness import Limits
from capreplay.agents.run import agent_spec, launch_ahead, plan_episodes, run_in_turn
from capreplay.judge.episode import Judge, judge_episode
from capreplay.judge.ground import Grounding
from capreplay.llm import make_client
from capreplay.models.episode import DEFAULT_SETTLING, EpisodeRecord, Settling
from capreplay.models.workflow import Workflows
from capreplay.replay.server import ReplayServer
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.testing.fake_llm import FakeLLM, Received


@dataclasses.dataclass(frozen=True)
class Mode:
    """How episodes are run: the settling, and whether the browser and agent are launched together (``together``,
    with one Playwright driver for all the browsers) and ahead of their episode, while the one before runs
    (``ahead``)."""

    name: str
    settling: Settling
    ahead: bool
    """Launch ahead where ``capreplay run`` would (:func:`~capreplay.agents.run.launch_ahead`)."""
    together: bool


BEFORE = Mode("network-idle", "network-idle", ahead=False, together=False)
"""As episodes ran before the server's quiet signal: launch, start page, agent, one after another."""
QUIET_ONLY = Mode("server-quiet", "server-quiet", ahead=False, together=True)
"""The server's quiet signal, the browser and agent launched together, but not ahead."""
DEFAULT = Mode("server-quiet+ahead", DEFAULT_SETTLING, ahead=True, together=True)
"""What ``capreplay run`` does now."""
MODES = {m.name: m for m in (BEFORE, QUIET_ONLY, DEFAULT)}


async def episodes(
    snapshot: Path,
    workflows: Workflows,
    tasks_file: Path,
    browsers: int,
    mode: Mode = DEFAULT,
    shots_dir: Path | None = None,
) -> dict[str, Any]:
    """Every task once with the gold agent, ``browsers`` at a time, on one server, as ``capreplay run`` runs them
    (:func:`capreplay.agents.run.run_in_turn`); timings and the server's log. Screenshots go to ``shots_dir``
    (kept) or a temporary folder. The gold agent waits for the network itself or leaves it to the harness, as
    the harness's settling tells it."""
    specs = {"gold": agent_spec("gold", workflows, tasks_file)}
    limits = Limits(workflows.step_limit, workflows.episode_timeout_s)
    keys = plan_episodes(workflows.seed, 1, [t.id for t in workflows.tasks], ["gold"])
    server = ReplayServer(snapshot, keep_log=True)
    await server.start()
    records: list[EpisodeRecord] = []
    served: list[Any] = []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = shots_dir or Path(scratch)

        todo = collections.deque(keys)

        async def worker() -> None:
            await run_in_turn(server, todo, workflows, specs, limits, tmp, mode.settling, records.append,
                              ahead=mode.ahead and launch_ahead(browsers), together=mode.together,
                              share_driver=mode.together)

        began = time.perf_counter()
        cpu = time.process_time()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(browsers):
                    group.create_task(worker())
            elapsed = time.perf_counter() - began
            own_cpu = time.process_time() - cpu
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            child_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
            served = list(server.served)  # every episode takes its own records out: this should stay empty
        finally:
            await server.stop()
    requests = sum(len(r.requests) for r in records)
    return {
        "browsers": browsers,
        "episodes": len(records),
        "elapsed_s": elapsed,
        "episodes_per_min": 60 * len(records) / elapsed,
        "median_episode_s": statistics.median(r.duration_s + (r.launch_s or 0) for r in records),
        "median_after_launch_s": statistics.median(r.duration_s for r in records),
        "statuses": {s: sum(r.status == s for r in records) for s in {r.status for r in records}},
        "requests": requests,
        "requests_per_s": requests / elapsed,
        "misses": sum(q.result == "miss" for r in records for q in r.requests),
        "blocked": sum(q.result == "blocked" for r in records for q in r.requests),
        "server_errors": sum((q.status or 0) >= 500 for r in records for q in r.requests),
        "left_in_log": len(served),
        "server_process_cpu_s": own_cpu,
        "children_cpu_s": child_cpu,
        "mode": mode.name,
        "settling": mode.settling,
        "launch_s": [r.launch_s for r in records],
        "records": [r.model_dump(mode="json", include={"key", "duration_s", "status", "answer"}) for r in records],
        "first_step_s": [r.steps[0].at_s for r in records if r.steps],
        "steps_s": [r.steps[-1].at_s - r.steps[0].at_s for r in records if r.steps],
        "shots": {r.key.task: [s.screenshot for s in r.steps] for r in records},
    }


def compare_shots(old_dir: Path, new_dir: Path, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Every step's screenshot of ``old`` against ``new``'s: byte-identical, else how many pixels differ."""
    from PIL import Image, ImageChops

    same = differ = missing = 0
    differences: list[dict[str, Any]] = []
    for task, paths in old["shots"].items():
        others = new["shots"].get(task, [])
        if len(others) != len(paths):
            missing += abs(len(others) - len(paths))
        for a, b in zip(paths, others, strict=False):
            if a is None or b is None:
                missing += 1
                continue
            one, two = (old_dir / a).read_bytes(), (new_dir / b).read_bytes()
            if one == two:
                same += 1
                continue
            differ += 1
            x, y = Image.open(io.BytesIO(one)).convert("RGB"), Image.open(io.BytesIO(two)).convert("RGB")
            # A pixel differs where any channel does: the largest channel difference, counted where it is not 0.
            diff = ImageChops.difference(x, y) if x.size == y.size else None
            channels = diff.split() if diff is not None else ()
            pixels = -1 if diff is None else diff.width * diff.height - ImageChops.lighter(
                ImageChops.lighter(channels[0], channels[1]), channels[2]).histogram()[0]
            differences.append({"task": task, "screenshot": a, "pixels_differing": pixels,
                                "sha256": [hashlib.sha256(one).hexdigest(), hashlib.sha256(two).hexdigest()]})
    return {"identical": same, "different": differ, "missing": missing, "differences": differences}


def outcomes(result: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    """Each task's status and answer: what the judge's verdict is computed from."""
    return {r["key"]["task"]: (r["status"], r["answer"]) for r in result["records"]}


async def compare_settling(args: argparse.Namespace, snapshot: Path, workflows: Workflows) -> dict[str, Any]:
    """The gold episodes on one browser in each mode, in turn, round after round; see the module's text."""
    modes = [MODES[name] for name in args.modes]
    rounds: list[dict[str, Any]] = []
    for n in range(args.rounds):
        order = modes if n % 2 == 0 else list(reversed(modes))
        with tempfile.TemporaryDirectory() as tmp:
            runs: dict[str, dict[str, Any]] = {}
            for mode in order:
                shots = Path(tmp, mode.name)
                shots.mkdir()
                runs[mode.name] = await episodes(snapshot, workflows, args.tasks, 1, mode, shots)
                print(f"round {n + 1}, {mode.name}: {runs[mode.name]['episodes_per_min']:.1f} episodes/min "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
            base = modes[0].name
            shots_compared = {m.name: compare_shots(Path(tmp, base), Path(tmp, m.name), runs[base], runs[m.name])
                              for m in modes[1:]}
        old = outcomes(runs[base])
        same = {m.name: outcomes(runs[m.name]) == old for m in modes[1:]}
        differing = {m.name: sorted(t for t in old if old[t] != outcomes(runs[m.name]).get(t)) for m in modes[1:]}
        rounds.append({"order": [m.name for m in order], "runs": runs, "screenshots": shots_compared,
                       "same_outcomes": same, "outcomes_differing": differing, "load": os.getloadavg()})
        for name, compared in shots_compared.items():
            print(f"round {n + 1}, {name} against {base}: screenshots {compared['identical']} identical, "
                  f"{compared['different']} different, {compared['missing']} missing; same outcomes: {same[name]}",
                  flush=True)
    return {"settling_rounds": rounds, "modes": args.modes}


def settling_table(raw: dict[str, Any]) -> str:
    """The comparison of modes as Markdown: medians over rounds, totals of the checks against the first mode."""
    rounds = raw["settling_rounds"]
    names: list[str] = raw["modes"]

    def med(mode: str, key: str) -> float:
        return statistics.median(r["runs"][mode][key] for r in rounds)

    def med_list(mode: str, key: str) -> float:
        return statistics.median(x for r in rounds for x in r["runs"][mode][key])

    lines = [f"| mode | episodes/min (1 browser) | × {names[0]} | median episode s (with launch) "
             "| median launch s | median s to first step | median s first to last step | answered "
             "| same status and answer | step screenshots identical |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    base = med(names[0], "episodes_per_min")
    for mode in names:
        answered = sum(r["runs"][mode]["statuses"].get("answered", 0) for r in rounds)
        total = sum(r["runs"][mode]["episodes"] for r in rounds)
        if mode == names[0]:
            same, shots = "(baseline)", "(baseline)"
        else:
            same = str(all(r["same_outcomes"][mode] for r in rounds))
            identical = sum(r["screenshots"][mode]["identical"] for r in rounds)
            compared = identical + sum(r["screenshots"][mode]["different"] + r["screenshots"][mode]["missing"]
                                       for r in rounds)
            shots = f"{identical}/{compared}"
        lines.append(f"| {mode} | {med(mode, 'episodes_per_min'):.1f} | "
                     f"{med(mode, 'episodes_per_min') / base:.2f} | {med(mode, 'median_episode_s'):.2f} | "
                     f"{med_list(mode, 'launch_s'):.2f} | {med_list(mode, 'first_step_s'):.2f} | "
                     f"{med_list(mode, 'steps_s'):.2f} | {answered}/{total} | {same} | {shots} |")
    lines += ["", f"- rounds: {len(rounds)} (orders: {'; '.join('/'.join(r['order']) for r in rounds)})",
              "- per round, episodes/min: " + "; ".join(
                  ", ".join(f"{m} {r['runs'][m]['episodes_per_min']:.1f}" for m in names) for r in rounds),
              "- load average (1, 5, 15 min) after each round: " + "; ".join(
                  " ".join(f"{x:.1f}" for x in r["load"]) for r in rounds)]
    for r in rounds:
        for mode, compared in r["screenshots"].items():
            for d in compared["differences"]:
                lines.append(f"  - {mode}: {d['screenshot']}: {d['pixels_differing']} pixels differ")
            for t in r["outcomes_differing"][mode]:
                lines.append(f"  - {mode}: {t}: status or answer differs")
    return "\n".join(lines)


def free_text(answer: str) -> str:
    """The gold answer as prose, so that the judge must call its model to read it."""
    fields = json.loads(answer)
    return "Here is what I found. " + " ".join(f"The {k.replace('_', ' ')} is {v}." for k, v in fields.items())


async def judge_times(snapshot: Path, workflows: Workflows, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Judge the gold answers as JSON, then as free text from a warm response cache; seconds per task."""
    answers = {r["key"]["task"]: r["answer"] for r in records if r["status"] == "answered"}

    def reply(received: Received) -> str:
        # The fake model stands in for a perfect reader: it confirms the gold answers' claims and extracts the
        # gold fields, finding the task by its description. Only the time is measured here.
        if "\nThe claim: " in received.prompt:
            return json.dumps({"holds": True, "quote": ""})
        for task in workflows.tasks:
            if task.description in received.prompt:
                return answers[task.id]
        return "{}"

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as cache:
        async with FakeLLM(reply) as fake:
            settings = workflows.judge.model.model_copy(update={"base_url": fake.base_url})
            client = make_client(settings, cache_dir=Path(cache), api_key="bench-key")
            async with Grounding(snapshot) as grounding:
                judge = Judge(grounding, client)
                for label, text_of in (("json", lambda a: a), ("cold free text", free_text),
                                       ("cached free text", free_text)):
                    # A fresh renderer each pass: the grounded checks are timed, not a warm page cache.
                    judge.grounding._rendered.clear()
                    times, scores = [], []
                    for task_id, answer in sorted(answers.items()):
                        record = EpisodeRecord.model_validate(
                            {"key": {"repeat": 0, "task": task_id, "agent": "gold"}, "started_at": datetime.now(UTC),
                             "duration_s": 0, "status": "answered", "answer": text_of(answer),
                             "start_url": workflows.task(task_id).start_url}
                        )
                        began = time.perf_counter()
                        verdict = await judge_episode(record, workflows.task(task_id), judge)
                        times.append(time.perf_counter() - began)
                        scores.append(verdict.score)
                    out[label] = {"per_task_s": times, "median_s": statistics.median(times),
                                  "mean_s": statistics.mean(times), "scores": scores}
            await client.aclose()
            out["model_calls"] = len(fake.calls("messages"))
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    tasks = load_tasks_file(args.tasks)
    if tasks.workflows is None:
        raise SystemExit(f"{args.tasks}: no workflows")
    workflows = tasks.workflows
    snapshot = tasks.snapshot_path(workflows.snapshot, args.tasks)
    if args.compare_settling:
        return await compare_settling(args, snapshot, workflows)
    rounds: list[list[dict[str, Any]]] = []
    for n in range(args.rounds):
        order = args.browsers if n % 2 == 0 else list(reversed(args.browsers))
        runs = []
        for browsers in order:
            result = await episodes(snapshot, workflows, args.tasks, browsers, MODES[args.mode])
            print(f"round {n + 1}, {browsers} browser(s): {result['episodes_per_min']:.1f} episodes/min", flush=True)
            runs.append(result)
        rounds.append(runs)
    judge = await judge_times(snapshot, workflows, rounds[-1][0]["records"])
    return {"rounds": rounds, "judge": judge}


def table(raw: dict[str, Any], browser_counts: list[int]) -> str:
    lines = ["| browsers | episodes/min | × 1 browser | median episode s | requests/s | misses | 5xx "
             "| server process CPU % of elapsed | browsers+agents CPU % |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    def med(b: int, key: str) -> float:
        return statistics.median(r[key] for rnd in raw["rounds"] for r in rnd if r["browsers"] == b)

    base = med(browser_counts[0], "episodes_per_min")
    for b in browser_counts:
        lines.append(f"| {b} | {med(b, 'episodes_per_min'):.1f} | {med(b, 'episodes_per_min') / base:.2f} | "
                     f"{med(b, 'median_episode_s'):.2f} | {med(b, 'requests_per_s'):.0f} | "
                     f"{int(sum(r['misses'] for rnd in raw['rounds'] for r in rnd if r['browsers'] == b))} | "
                     f"{int(sum(r['server_errors'] for rnd in raw['rounds'] for r in rnd if r['browsers'] == b))} | "
                     f"{100 * med(b, 'server_process_cpu_s') / med(b, 'elapsed_s'):.0f} | "
                     f"{100 * med(b, 'children_cpu_s') / med(b, 'elapsed_s'):.0f} |")
    lines += ["", "| judge pass | median s per task | mean s per task | all scores 1.0 |",
              "| --- | ---: | ---: | --- |"]
    for label in ("json", "cold free text", "cached free text"):
        j = raw["judge"][label]
        lines.append(f"| {label} | {j['median_s']:.2f} | {j['mean_s']:.2f} | {all(s == 1.0 for s in j['scores'])} |")
    lines.append(f"\nmodel calls made by the judge in all passes: {raw['judge']['model_calls']}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=Path("tasks.json"))
    parser.add_argument("--browsers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("results/bench"))
    parser.add_argument("--compare-settling", action="store_true",
                        help="compare ways of running episodes (--modes) on one browser instead")
    parser.add_argument("--modes", nargs="+", choices=sorted(MODES), default=list(MODES),
                        help="with --compare-settling: the modes, the first one the baseline")
    parser.add_argument("--mode", choices=sorted(MODES), default=DEFAULT.name,
                        help="without --compare-settling: how the episodes run")
    args = parser.parse_args()
    began = datetime.now(UTC)
    raw = asyncio.run(main_async(args))
    raw["environment"] = {"python": sys.version.split()[0], "platform": platform.platform(),
                          "cpus": os.cpu_count(), "started": began.isoformat()}
    args.out.mkdir(parents=True, exist_ok=True)
    name = "settling" if args.compare_settling else "agents"
    path = args.out / f"{name}-{began:%Y-%m-%dT%H%M}.json"
    path.write_text(json.dumps(raw, indent=1) + "\n")
    print(settling_table(raw) if args.compare_settling else table(raw, args.browsers))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
