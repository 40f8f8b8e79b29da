"""The one rule for a model's key and endpoint: the role's own variable first, then the provider's."""

from __future__ import annotations

import argparse

import pytest

from capreplay.cli.options import add_base_url_option, model_access
from capreplay.llm.access import key_help, model_base_url, model_key
from capreplay.llm.messages import ModelSettings


def test_the_roles_own_key_comes_first() -> None:
    environ = {"CAPREPLAY_JUDGE_API_KEY": "judge", "ANTHROPIC_API_KEY": "shared", "OPENAI_API_KEY": "openai"}
    assert model_key("judge", "anthropic", environ) == "judge"
    assert model_key("agent", "anthropic", environ) == "shared"
    assert model_key("tasks", "openai_compatible", environ) == "openai"
    assert model_key("study", "anthropic", {}) is None


def test_an_empty_variable_counts_as_unset() -> None:
    assert model_key("agent", "anthropic", {"CAPREPLAY_AGENT_API_KEY": "", "ANTHROPIC_API_KEY": "k"}) == "k"


def test_the_command_line_then_the_variable_then_the_settings() -> None:
    environ = {"CAPREPLAY_STUDY_BASE_URL": "http://127.0.0.1:2/"}
    assert model_base_url("study", "http://127.0.0.1:1/", "http://127.0.0.1:3/", environ) == "http://127.0.0.1:1/"
    assert model_base_url("study", None, "http://127.0.0.1:3/", environ) == "http://127.0.0.1:2/"
    assert model_base_url("judge", None, "http://127.0.0.1:3/", environ) == "http://127.0.0.1:3/"
    assert model_base_url("judge", None, None, environ) is None


def test_help_names_both_variables() -> None:
    assert key_help("judge") == "$CAPREPLAY_JUDGE_API_KEY, else $ANTHROPIC_API_KEY"
    assert key_help("tasks", "openai_compatible") == "$CAPREPLAY_TASKS_API_KEY, else $OPENAI_API_KEY"


def test_a_verb_reads_its_role_from_the_command_line_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CAPREPLAY_JUDGE_API_KEY", "CAPREPLAY_JUDGE_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CAPREPLAY_JUDGE_BASE_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("CAPREPLAY_JUDGE_API_KEY", "judge-key")
    parser = argparse.ArgumentParser()
    add_base_url_option(parser, "judge", "the judge's")
    settings = ModelSettings(provider="anthropic", model="m", max_tokens=10)

    from_env, key = model_access(parser.parse_args([]), "judge", settings)
    assert (from_env.base_url, key) == ("http://127.0.0.1:9/", "judge-key")
    given, _ = model_access(parser.parse_args(["--base-url", "http://127.0.0.1:8/"]), "judge", settings)
    assert given.base_url == "http://127.0.0.1:8/"
    assert settings.base_url is None
