"""Prove every task of the benchmark on its frozen snapshot, and write the committed proof report.

    .venv/bin/python scripts/prove_benchmark.py [--benchmark benchmark] [--task ID ...] [--no-browsergym] [--jobs N]

1. ``capreplay tasks check benchmark/tasks.json --json``: the six checks of every task (the gold agent's run
   through the real harness, no request off the snapshot, the values on the reached pages, the evidence, the
   judge's score 1.0, and the mutation check: each output changed alone fails exactly the leaves that read it);
2. BrowserGym's scripted ``GoldPathAgent`` on every task (``scripts/browsergym_gold.py`` in the BrowserGym
   adapter's environment): its reward is the judge's root score.

The report goes to ``benchmark/proof/report.md`` and ``report.json``; the suite proves a sample of the tasks.
A script, not a test: it runs for most of an hour on two cores. ``--jobs N`` splits the tasks into N shards
whose proofs and BrowserGym runs all go at once (each process mostly waits on its browser).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _all_lines(commands: list[list[str]]) -> list[tuple[list[dict[str, object]], str]]:
    """Run ``commands`` at once; each one's JSON lines and the tail of its stderr, in order."""
    running = [subprocess.Popen(c, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for c in commands]  # fmt: skip
    found = []
    for process in running:
        out, err = process.communicate()
        found.append(([json.loads(line) for line in out.splitlines() if line.startswith("{")], err.strip()[-2000:]))
    return found


def _task_ids(tasks: Path) -> list[str]:
    return [str(w["id"]) for w in json.loads(tasks.read_text())["workflows"]["tasks"]]


def _visiting(tasks: Path, hosts: set[str]) -> set[str]:
    """The ids of the tasks whose sites include one of ``hosts``."""
    workflows = json.loads(tasks.read_text())["workflows"]["tasks"]
    return {t["id"] for t in workflows if hosts & set(t["sites"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", type=Path, default=ROOT / "benchmark")
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--no-browsergym", action="store_true")
    parser.add_argument("--jobs", type=int, default=1, help="shards run at once (default 1)")
    parser.add_argument("--again", action="store_true",
                        help="run only the tasks the committed report does not show proven with BrowserGym's 1.0, "
                        "the tasks it lacks and those --task or --host name; keep its other rows")  # fmt: skip
    parser.add_argument("--host", action="append", default=[],
                        help="also the tasks that visit this host (e.g. after its part was captured again)")
    args = parser.parse_args()
    tasks = args.benchmark / "tasks.json"
    out = args.benchmark / "proof"
    every = _task_ids(tasks)
    kept: dict[str, dict[str, object]] = {}
    runs: list[dict[str, object]] = []
    named = set(args.task) | _visiting(tasks, set(args.host))
    if args.again and (out / "report.json").is_file():
        before = json.loads((out / "report.json").read_text())
        runs = before["summary"].get("runs") or [{k: before["summary"][k] for k in ("date", "tasks", "wall_s", "jobs")}]
        kept = {str(r["task"]): r for r in before["tasks"] if r["task"] in every and r["task"] not in named
                and r["proven"] and r["browsergym_reward"] == 1.0}  # fmt: skip
    ids = [t for t in every if t not in kept] if args.again else [t for t in every if t in named] or every
    shards = [[a for t in ids[k :: args.jobs] for a in ("--task", t)] for k in range(min(args.jobs, len(ids)))]
    commands = [[sys.executable, "-m", "capreplay", "tasks", "check", str(tasks), "--json", *only] for only in shards]
    if not args.no_browsergym:
        commands += [["uv", "run", "--project", "adapters/browsergym", "--locked", "python",
                      "scripts/browsergym_gold.py", str(tasks), *only] for only in shards]  # fmt: skip
    started = time.monotonic()
    results = _all_lines(commands)
    wall_s = time.monotonic() - started
    proofs = [line for lines, _ in results[: len(shards)] for line in lines]
    proof_err = "\n".join(err for _, err in results[: len(shards)] if err)[-2000:]
    gym = [line for lines, _ in results[len(shards) :] for line in lines]
    gym_err = "\n".join(err for _, err in results[len(shards) :] if err)[-2000:]
    by_task = {str(g["task"]): g for g in gym}
    rows = list(kept.values())
    for proof in proofs:
        task = str(proof["task"])
        failed = [c["name"] for c in proof.get("checks", []) if not c.get("passed")]  # type: ignore[attr-defined]
        g = by_task.get(task, {})
        rows.append({"task": task, "proven": bool(proof.get("passed")), "failed_checks": failed,
                     "gold_score": proof.get("score"), "browsergym_reward": g.get("reward"),
                     "browsergym_error": g.get("error") or (f"below 1: {', '.join(g['below_one'])}"
                                                            if g.get("below_one") else None)})  # fmt: skip
    order = {t: n for n, t in enumerate(every)}
    rows.sort(key=lambda r: order.get(str(r["task"]), len(order)))
    out.mkdir(exist_ok=True)
    date = datetime.now(UTC).isoformat(timespec="seconds")
    runs.append({"date": date, "tasks": len(proofs), "wall_s": round(wall_s), "jobs": len(shards)})
    summary = {"date": date, "tasks": len(rows), "runs": runs,
               "proven": sum(r["proven"] for r in rows), "wall_s": round(wall_s), "jobs": len(shards),
               "browsergym_run": not args.no_browsergym,
               "browsergym_reward_1": sum(r["browsergym_reward"] == 1.0 for r in rows),
               "proof_stderr_tail": proof_err, "browsergym_stderr_tail": gym_err}  # fmt: skip
    (out / "report.json").write_text(json.dumps({"summary": summary, "tasks": rows}, indent=1) + "\n")
    lines = [
        "# Proof of the benchmark's tasks",
        "",
        f"{summary['date']}: {summary['proven']} of {summary['tasks']} tasks proven by the six checks of "
        "`capreplay tasks check`"
        + (
            f"; BrowserGym's scripted gold agent scored 1.0 on {summary['browsergym_reward_1']}"
            if not args.no_browsergym
            else "; BrowserGym's agent not run"
        )
        + ". Runs: "
        + "; ".join(f"{r['date']}, {r['tasks']} tasks in {r['wall_s']} s ({r['jobs']} shards at once)" for r in runs)
        + ".",
        "",
        "| task | proven | failed checks | gold score | BrowserGym reward |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        reward = r["browsergym_reward"] if r["browsergym_reward"] is not None else (r["browsergym_error"] or "-")
        lines.append(
            f"| {r['task']} | {'yes' if r['proven'] else 'no'} | {', '.join(r['failed_checks']) or '-'} "
            f"| {r['gold_score']} | {reward} |"
        )
    (out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))


if __name__ == "__main__":
    main()
