"""BrowserGym's scripted gold agent on a tasks file's workflow tasks: one JSON line per task.

    uv run --project adapters/browsergym --locked python scripts/browsergym_gold.py TASKS.json [--task ID ...]

Each task is made a gymnasium environment (``capreplay_browsergym.register``) and solved by ``GoldPathAgent``
through BrowserGym's high-level actions only; the line holds the reward (the judge's root score), whether the
judge passed it, and the episode's requests that left the snapshot. Run in the BrowserGym adapter's own
environment; ``scripts/prove_benchmark.py`` calls it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time

import capreplay_browsergym
import gymnasium as gym
from browsergym.core.action.highlevel import HighLevelActionSet
from capreplay_browsergym.gold import GoldPathAgent

STEP_LIMIT = 80
ACTIONS = HighLevelActionSet(subsets=["chat", "infeas", "bid", "coord", "nav", "tab"])
"""BrowserGym's default actions and its coordinate ones: a chart's bar is hovered and a map dragged at a point."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks")
    parser.add_argument("--task", action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as results:
        # SVG map shapes and chart bars are gold targets: BrowserGym marks them only when told to mark every tag.
        ids = capreplay_browsergym.register(args.tasks, results_dir=results, tags_to_mark="all",
                                            action_mapping=ACTIONS.to_python_code)  # fmt: skip
        wanted = [i for i in ids if not args.task or i.removeprefix("browsergym/capreplay.") in args.task]
        for name in wanted:
            started = time.monotonic()
            line: dict[str, object] = {"task": name.removeprefix("browsergym/capreplay.")}
            env = gym.make(name)
            try:
                agent = GoldPathAgent(env.unwrapped.workflow, coordinates=True)  # type: ignore[attr-defined]
                obs, info = env.reset()
                reward, done, steps = 0.0, False, 0
                while not done and steps < STEP_LIMIT:
                    action, _ = agent.get_action(obs)
                    obs, reward, terminated, truncated, info = env.step(action)
                    done, steps = terminated or truncated, steps + 1
                verdict = info.get("task_info", {}).get("verdict") or {}
                below = sorted(n for n, score in (verdict.get("node_scores") or {}).items() if score < 1.0)
                line |= {"reward": None if reward is None or math.isnan(reward) else reward,
                         "passed": verdict.get("passed"), "steps": steps, "below_one": below}  # fmt: skip
            except Exception as e:  # a task the agent cannot do is a row of the report, not the end of the run
                line |= {"reward": None, "passed": None, "error": f"{type(e).__name__}: {e}"[:300]}
            finally:
                env.close()
            line["seconds"] = round(time.monotonic() - started, 1)
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    sys.exit(main())
