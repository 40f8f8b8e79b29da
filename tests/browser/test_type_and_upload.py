"""The ``type`` and ``upload`` steps in a real Chromium: text typed over an editor's selected placeholder, and a file
chosen in a file input, as WikiEditor's toolbar and MediaWiki's Special:Upload need them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from capreplay.browser.actions import run_action
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.errors import InputError
from capreplay.models.capture_plan import Click, Fill, Press, TypeText, Upload

pytestmark = pytest.mark.browser

EDITOR = """<!doctype html>
<textarea id="text"></textarea>
<button id="bold" onclick="bold()">B</button>
<script>
// As WikiEditor's Bold does with no selection: insert a placeholder at the caret and select it.
function bold() {
  const t = document.getElementById("text"), at = t.selectionStart;
  t.value = t.value.slice(0, at) + "'''Bold text'''" + t.value.slice(t.selectionEnd);
  t.focus();
  t.setSelectionRange(at + 3, at + 12);
}
</script>"""

UPLOAD = """<!doctype html>
<form><input type="file" id="file" name="file"></form>
<p id="chosen"></p>
<script>
document.getElementById("file").addEventListener("change", async (e) => {
  const f = e.target.files[0], bytes = new Uint8Array(await f.arrayBuffer());
  document.getElementById("chosen").textContent = `${f.name} ${f.size} ${bytes[1]}${bytes[2]}${bytes[3]}`;
});
</script>"""


def _settings() -> BrowserSettings:
    return BrowserSettings([], datetime(2026, 12, 7, tzinfo=UTC), 7)


async def test_typing_replaces_the_selected_placeholder_and_keeps_the_rest() -> None:
    async with open_browser(_settings()) as ctx:
        page = ctx.pages[0]
        await page.set_content(EDITOR)
        await run_action(page, Fill(type="fill", selector="#text", value="Signals: "))
        await run_action(page, Click(type="click", selector="#bold"))
        await run_action(page, TypeText(type="type", selector="#text", value="SIGKILL"))
        await run_action(page, TypeText(type="type", selector="#text", value="\nnext"))
        value = await page.input_value("#text")
    assert value == "Signals: '''SIGKILL\nnext'''"


async def test_a_file_is_chosen_in_the_file_input_from_a_path_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(17))
    monkeypatch.chdir(tmp_path)
    async with open_browser(_settings()) as ctx:
        page = ctx.pages[0]
        await page.set_content(UPLOAD)
        await run_action(page, Upload(type="upload", selector="#file", file="files/icon.png"))
        await page.wait_for_function("document.getElementById('chosen').textContent !== ''")
        chosen = await page.inner_text("#chosen")
    assert chosen == "icon.png 25 807871"  # "PNG" is 80 78 71


async def test_a_missing_file_is_refused_before_the_browser_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with open_browser(_settings()) as ctx:
        page = ctx.pages[0]
        await page.set_content(UPLOAD)
        with pytest.raises(InputError, match=r"no file to upload at 'files/none\.png'"):
            await run_action(page, Upload(type="upload", selector="#file", file="files/none.png"))


async def test_pressing_end_moves_the_caret_past_the_placeholders_closing_marks() -> None:
    async with open_browser(_settings()) as ctx:
        page = ctx.pages[0]
        await page.set_content(EDITOR)
        await run_action(page, Click(type="click", selector="#bold"))
        await run_action(page, TypeText(type="type", selector="#text", value="SIGKILL"))
        await run_action(page, Press(type="press", selector="#text", key="End"))
        await run_action(page, TypeText(type="type", selector="#text", value=" ends it"))
        value = await page.input_value("#text")
    assert value == "'''SIGKILL''' ends it"
