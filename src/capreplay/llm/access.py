"""Which key and which endpoint a model call uses: one rule for every verb that calls a model.

Each caller has a role: ``agent`` (browser-use's model, in ``run`` and ``tasks cards --explore``), ``judge``
(``judge``, ``tasks check``), ``tasks`` (the generation model of ``tasks``) and ``study`` (``study run``).

- The key is ``$CAPREPLAY_<ROLE>_API_KEY``, else the provider's own variable (``ANTHROPIC_API_KEY`` or
  ``OPENAI_API_KEY``), so one key can serve every role while a judge's key never reaches an agent.
- The endpoint is the command line's ``--base-url``, else ``$CAPREPLAY_<ROLE>_BASE_URL``, else the model
  settings' ``base_url``, else the provider's default (None here).

Pure functions over an environment mapping: the command line passes ``os.environ``, a Ray worker its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

Role = Literal["agent", "judge", "tasks", "study"]
ROLES: tuple[Role, ...] = get_args(Role)
PROVIDER_KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai_compatible": "OPENAI_API_KEY"}


def key_variable(role: Role) -> str:
    """The role's own key variable, e.g. ``CAPREPLAY_JUDGE_API_KEY``."""
    return f"CAPREPLAY_{role.upper()}_API_KEY"


def base_url_variable(role: Role) -> str:
    """The role's own endpoint variable, e.g. ``CAPREPLAY_AGENT_BASE_URL``."""
    return f"CAPREPLAY_{role.upper()}_BASE_URL"


def key_variables(role: Role, provider: str) -> tuple[str, ...]:
    """The variables the key is read from, first found wins."""
    fallback = PROVIDER_KEY_VARIABLES.get(provider)
    return (key_variable(role), fallback) if fallback else (key_variable(role),)


def model_key(role: Role, provider: str, environ: Mapping[str, str]) -> str | None:
    """The key ``role`` calls ``provider`` with, or None when none is set (an empty value counts as unset)."""
    return next((environ[name] for name in key_variables(role, provider) if environ.get(name)), None)


def model_base_url(role: Role, given: str | None, settings_url: str | None, environ: Mapping[str, str]) -> str | None:
    """The endpoint root ``role`` calls: ``given`` (the command line), its variable, the settings', or None."""
    return given or environ.get(base_url_variable(role)) or settings_url


def key_help(role: Role, provider: str = "anthropic") -> str:
    """Where the key comes from, in words, for help texts and errors: ``$A, else $B``."""
    return ", else ".join(f"${name}" for name in key_variables(role, provider))
