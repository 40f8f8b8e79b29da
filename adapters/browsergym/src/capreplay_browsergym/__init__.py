"""capreplay's workflow tasks as BrowserGym environments, on an offline snapshot, judged by capreplay's judge.

    import gymnasium as gym
    import capreplay_browsergym

    capreplay_browsergym.register("tasks.json")          # browsergym/capreplay.<task id> for every workflow task
    env = gym.make("browsergym/capreplay.budget-tent")
    obs, info = env.reset()

With ``$CAPREPLAY_TASKS`` set, importing this package registers that tasks file's tasks.
"""

from __future__ import annotations

from capreplay_browsergym.env import CapreplayEnv
from capreplay_browsergym.registration import env_id, register, register_from_environment
from capreplay_browsergym.task import CapreplayTask

__all__ = ["CapreplayEnv", "CapreplayTask", "env_id", "register"]

register_from_environment()
