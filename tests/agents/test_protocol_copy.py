"""The browser_use adapter keeps its own copy of the agent protocol's messages (it cannot import capreplay):
the copy must describe exactly the same JSON as the original."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel

from capreplay.agents import protocol

COPY = Path(__file__).resolve().parents[2] / "adapters/browser_use/src/capreplay_browser_use/agent/messages.py"
MESSAGES = ("TaskOutput", "AgentTask", "Start", "Ack", "Stop", "StepAction", "Step", "AgentUsage", "Answer",
            "AgentFailed")  # fmt: skip


def _load_copy() -> ModuleType:
    # Loaded by path, as a module of its own: the adapter's package would import browser-use.
    spec = importlib.util.spec_from_file_location("adapter_messages", COPY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _shape(schema: Any) -> Any:
    """A JSON schema without its descriptions: the copy may word its docstrings for its own readers."""
    if isinstance(schema, dict):
        return {k: _shape(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_shape(v) for v in schema]
    return schema


@pytest.mark.parametrize("name", MESSAGES)
def test_the_adapter_copy_of_each_message_has_the_original_schema(name: str) -> None:
    copy = _load_copy()
    original: type[BaseModel] = getattr(protocol, name)
    copied: type[BaseModel] = getattr(copy, name)
    assert _shape(copied.model_json_schema()) == _shape(original.model_json_schema())
    assert copy.PROTOCOL_VERSION == protocol.PROTOCOL_VERSION
