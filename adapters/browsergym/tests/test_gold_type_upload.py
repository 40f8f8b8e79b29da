"""The gold agent's ``type`` and ``upload`` steps as BrowserGym actions: text typed at the caret is ``focus`` then
``keyboard_type`` (in the coordinate subset, so only with ``coordinates=True``), a file is ``upload_file``."""

from __future__ import annotations

from pathlib import Path

import pytest
from browsergym.core.constants import BROWSERGYM_ID_ATTRIBUTE
from capreplay.models.workflow import Click, TypeText, Upload, Workflows

from capreplay_browsergym.gold import GoldPathAgent, GoldPathError, unsupported
from test_gold_looks import OVERVIEW, RAIN_TENT, Element, _obs

EDITOR: list[Element] = [
    ("textarea", {"id": "wpTextbox1", BROWSERGYM_ID_ATTRIBUTE: "a7"}, ""),
    ("input", {"type": "file", "id": "wpUploadFile", BROWSERGYM_ID_ATTRIBUTE: "a9"}, ""),
    ("button", {"id": "preview", BROWSERGYM_ID_ATTRIBUTE: "b2"}, "Show preview"),
]


def _agent(workflows: Workflows, steps: list[object], coordinates: bool = True) -> GoldPathAgent:
    task = workflows.task(RAIN_TENT)
    return GoldPathAgent(task.model_copy(update={"gold_path": steps, "start_url": OVERVIEW}), coordinates)


def test_text_is_typed_where_the_caret_is_after_the_element_is_focused(workflows: Workflows) -> None:
    typed = TypeText(type="type", selector="#wpTextbox1", value="\n* ")
    agent = _agent(workflows, [typed, Click(type="click", selector="#preview")])
    obs = _obs(OVERVIEW, EDITOR)
    assert [agent.get_action(obs)[0] for _ in range(3)] == ["focus('a7')", "keyboard_type('\\n* ')", "click('b2')"]


def test_typing_needs_the_coordinate_subset(workflows: Workflows) -> None:
    typed = TypeText(type="type", selector="#wpTextbox1", value="x")
    task = workflows.task(RAIN_TENT).model_copy(update={"gold_path": [typed]})
    assert unsupported(task) == ["step 1 (type): text typed at the caret (keyboard_type), which needs BrowserGym's "
                                 "coordinate actions"]  # fmt: skip
    with pytest.raises(GoldPathError, match="keyboard_type"):
        GoldPathAgent(task)


def test_a_file_is_uploaded_into_the_file_input(workflows: Workflows, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "icon.png").write_bytes(b"\x89PNG")
    monkeypatch.chdir(tmp_path)
    agent = _agent(workflows, [Upload(type="upload", selector="#wpUploadFile", file="files/icon.png")], False)
    assert agent.get_action(_obs(OVERVIEW, EDITOR))[0] == "upload_file('a9', 'files/icon.png')"
