"""Prove every task of the benchmark on its frozen snapshot, and write the committed proof report.

    .venv/bin/python scripts/prove_benchmark.py [--benchmark benchmark] [--task ID ...] [--no-browsergym]

1. ``capreplay tasks check benchmark/tasks.json --json``: the six checks of every task (the gold agent's run
   through the real harness, no request off the snapshot, the values on the reached pages, the evidence, the
   judge's score 1.0, and the mutation check: each output changed alone fails exactly the leaves that read it);
2. BrowserGym's scripted ``GoldPathAgent`` on every task (``scripts/browsergym_gold.py`` in the BrowserGym
   adapter's environment): its reward is the judge's root score.

The report goes to ``benchmark/proof/report.md`` and ``report.json``; the suite proves a sample of the tasks.
A script, not a test: it runs for most of an hour on two cores.
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


def _lines(command: list[str]) -> tuple[list[dict[str, object]], str, float]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return found, done.stderr.strip()[-2000:], time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", type=Path, default=ROOT / "benchmark")
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--no-browsergym", action="store_true")
    args = parser.parse_args()
    tasks = args.benchmark / "tasks.json"
    only = [a for t in args.task for a in ("--task", t)]
    proofs, proof_err, proof_s = _lines([sys.executable, "-m", "capreplay", "tasks", "check", str(tasks), "--json",
                                         *only])  # fmt: skip
    gym: list[dict[str, object]] = []
    gym_err, gym_s = "", 0.0
    if not args.no_browsergym:
        gym, gym_err, gym_s = _lines(["uv", "run", "--project", "adapters/browsergym", "--locked", "python",
                                      "scripts/browsergym_gold.py", str(tasks), *only])  # fmt: skip
    by_task = {str(g["task"]): g for g in gym}
    rows = []
    for proof in proofs:
        task = str(proof["task"])
        failed = [c["name"] for c in proof.get("checks", []) if not c.get("passed")]  # type: ignore[attr-defined]
        g = by_task.get(task, {})
        rows.append({"task": task, "proven": bool(proof.get("passed")), "failed_checks": failed,
                     "gold_score": proof.get("score"), "browsergym_reward": g.get("reward"),
                     "browsergym_error": g.get("error")})  # fmt: skip
    out = args.benchmark / "proof"
    out.mkdir(exist_ok=True)
    summary = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "tasks": len(rows),
               "proven": sum(r["proven"] for r in rows), "proof_s": round(proof_s),
               "browsergym_run": not args.no_browsergym,
               "browsergym_reward_1": sum(r["browsergym_reward"] == 1.0 for r in rows), "browsergym_s": round(gym_s),
               "proof_stderr_tail": proof_err, "browsergym_stderr_tail": gym_err}  # fmt: skip
    (out / "report.json").write_text(json.dumps({"summary": summary, "tasks": rows}, indent=1) + "\n")
    lines = ["# Proof of the benchmark's tasks", "",
             f"{summary['date']}: {summary['proven']} of {summary['tasks']} tasks proven by the six checks of "
             f"`capreplay tasks check` in {summary['proof_s']} s"
             + (f"; BrowserGym's scripted gold agent scored 1.0 on {summary['browsergym_reward_1']} in "
                f"{summary['browsergym_s']} s." if not args.no_browsergym else "; BrowserGym's agent not run."),
             "", "| task | proven | failed checks | gold score | BrowserGym reward |", "|---|---|---|---|---|"]
    for r in rows:
        reward = r["browsergym_reward"] if r["browsergym_reward"] is not None else (r["browsergym_error"] or "-")
        lines.append(f"| {r['task']} | {'yes' if r['proven'] else 'no'} | {', '.join(r['failed_checks']) or '-'} "
                     f"| {r['gold_score']} | {reward} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))


if __name__ == "__main__":
    main()
