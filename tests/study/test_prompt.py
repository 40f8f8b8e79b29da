"""The study's prompt: requests built from the protocol in tasks.json, and answers parsed from replies."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from capreplay.llm import ImageBlock, TextBlock, make_client
from capreplay.models.task import ActTask, AnswerFormat, Protocol, ReadTask, Representation
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.study.answers.prompt import (
    Unparseable,
    build_request,
    empty_page_request,
    parse_answer,
    prompt_texts,
)
from capreplay.testing.fake_llm import FakeLLM

REPO = Path(__file__).resolve().parents[2]
STUDY = load_tasks_file(REPO / "tasks.json").study
assert STUDY is not None
PROTOCOL: Protocol = STUDY.protocol
READ = STUDY.task("article.read.1")
ACT = STUDY.task("article.act.1")
TEXT_REPRESENTATIONS: list[Representation] = ["raw_html", "markdown", "accessibility_tree", "indexed_dom"]
# A page that holds what would break a str.format template: braces, slot names, a backslash.
PAGE = '<p>{page} {question} {answer_format} {0} {"a": 1} \\n</p>'


def png(width: int = 64, height: int = 40) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 200)).save(out, format="PNG")
    return out.getvalue()


def texts(blocks: list[Any]) -> list[str]:
    return [b.text for b in blocks if isinstance(b, TextBlock)]


def test_the_template_is_cut_at_the_page_slot_and_filled() -> None:
    assert isinstance(READ, ReadTask) and isinstance(ACT, ActTask)
    before, after = prompt_texts(PROTOCOL, READ, "markdown")
    assert before == "Here is a web page.\n\n<page>\n"
    assert after == (
        f"\n</page>\n\n{READ.question}\n\n{PROTOCOL.answer_formats.read.instruction}"
    )
    _, act_after = prompt_texts(PROTOCOL, ACT, "indexed_dom")
    assert act_after.endswith(f"{ACT.instruction}\n\n{PROTOCOL.answer_formats.act['indexed_dom'].instruction}")


@pytest.mark.parametrize("representation", TEXT_REPRESENTATIONS)
def test_text_goes_verbatim_in_the_page_slot(representation: Representation) -> None:
    for task in (READ, ACT):
        request = build_request(PROTOCOL, task, representation, PAGE)
        before, after = prompt_texts(PROTOCOL, task, representation)
        assert request.system == PROTOCOL.prompt.system
        assert texts(request.content) == [before + PAGE + after]
        assert len(request.content) == 1
        empty = empty_page_request(PROTOCOL, task, representation)
        assert empty.system == request.system
        assert texts(empty.content) == [before + after]


def test_a_screenshot_sits_between_the_same_two_texts() -> None:
    image = png()
    for task in (READ, ACT):
        request = build_request(PROTOCOL, task, "screenshot", image)
        before, after = prompt_texts(PROTOCOL, task, "screenshot")
        first, middle, last = request.content
        assert isinstance(first, TextBlock) and isinstance(middle, ImageBlock) and isinstance(last, TextBlock)
        assert (first.text, last.text) == (before, after)
        assert base64.b64decode(middle.data) == image
        # The fixed prompt is the same two texts without the image.
        assert texts(empty_page_request(PROTOCOL, task, "screenshot").content) == [before, after]
    # Text representations put the same texts around their page: only the page differs between them.
    assert prompt_texts(PROTOCOL, READ, "screenshot") == prompt_texts(PROTOCOL, READ, "raw_html")


def test_the_page_content_must_match_the_representation() -> None:
    with pytest.raises(TypeError, match="screenshot content must be PNG bytes, not str"):
        build_request(PROTOCOL, READ, "screenshot", "<p>text</p>")
    with pytest.raises(TypeError, match="markdown content must be text, not bytes"):
        build_request(PROTOCOL, READ, "markdown", png())


def test_a_template_that_starts_with_its_page_sends_no_empty_block() -> None:
    prompt = PROTOCOL.prompt.model_copy(update={"user": "{page}\n{question}\n{answer_format}"})
    protocol = PROTOCOL.model_copy(update={"prompt": prompt})
    request = build_request(protocol, READ, "screenshot", png())
    assert [type(b).__name__ for b in request.content] == ["ImageBlock", "TextBlock"]
    assert texts(empty_page_request(protocol, READ, "markdown").content)[0].startswith("\n")


async def test_the_requests_reach_the_api_as_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the real Anthropic SDK over real HTTP: the server sees the system text, the texts and the image."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-prompt")
    image = png(128, 80)
    async with FakeLLM('{"x": 10, "y": 20}') as fake:
        settings = PROTOCOL.model.model_copy(update={"base_url": fake.base_url, "timeout_s": 10.0})
        client = make_client(settings)
        try:
            await client.complete(build_request(PROTOCOL, ACT, "screenshot", image))
            await client.complete(build_request(PROTOCOL, READ, "raw_html", PAGE))
            await client.count_tokens(empty_page_request(PROTOCOL, READ, "raw_html"))
        finally:
            await client.aclose()
    shot, text, empty = fake.received
    before, after = prompt_texts(PROTOCOL, ACT, "screenshot")
    assert shot.texts == [PROTOCOL.prompt.system, before, after]
    assert shot.images == [image]
    assert shot.body["model"] == "claude-sonnet-5" and shot.body["max_tokens"] == 512
    assert shot.body["thinking"] == {"type": "disabled"}
    read_before, read_after = prompt_texts(PROTOCOL, READ, "raw_html")
    assert text.texts == [PROTOCOL.prompt.system, read_before + PAGE + read_after]
    assert empty.api == "count_tokens" and empty.texts == [PROTOCOL.prompt.system, read_before + read_after]


# -------------------------------------------------------------------------------------------- answers


def fmt(representation: Representation | None) -> AnswerFormat:
    return PROTOCOL.answer_formats.read if representation is None else PROTOCOL.answer_formats.act[representation]


PARSED = [
    (None, '{"answer": "3 March 2026"}', {"answer": "3 March 2026"}),
    (None, 'Sure.\n```json\n{"answer": "Unit 4"}\n```', {"answer": "Unit 4"}),
    (None, '{"answer": 1204}', {"answer": "1204"}),
    (None, '{"answer": 1.50}', {"answer": "1.50"}),
    (None, '{"answer": "x", "confidence": 0.9}', {"answer": "x"}),
    (None, '{"answer": ""}', {"answer": ""}),
    (None, 'not {json} but then {"answer": "later"} and {"answer": "last"}', {"answer": "later"}),
    (None, '{"answer": "a {brace} inside"}', {"answer": "a {brace} inside"}),
    ("raw_html", '{"selector": "button.share-copy"}', {"selector": "button.share-copy"}),
    ("markdown", '{"text": "Share"}', {"text": "Share"}),
    ("markdown", '{"text": "Share", "occurrence": null}', {"text": "Share"}),
    ("markdown", '{"text": "Share", "occurrence": 2}', {"text": "Share", "occurrence": 2}),
    ("accessibility_tree", '{"role": "button", "name": "Copy link"}', {"role": "button", "name": "Copy link"}),
    ("indexed_dom", '{"index": 12}', {"index": 12}),
    ("indexed_dom", '{"index": 12.0}', {"index": 12}),
    ("screenshot", '{"x": 640, "y": 400.5}', {"x": 640, "y": 400.5}),
    # The first object is the outermost one: keys nested in it are not the answer's.
    ("screenshot", '{"outer": {"x": 1, "y": 2}} {"x": 3, "y": 4}', Unparseable(reason="the JSON object has no 'x'")),
]
UNPARSEABLE = [
    (None, "The answer is 3 March 2026.", "no JSON object in the reply"),
    (None, '{"answer": "unterminated', "no JSON object in the reply"),
    (None, "[1, 2]", "no JSON object in the reply"),
    (None, '{"reply": "x"}', "the JSON object has no 'answer'"),
    (None, '{"answer": null}', "the JSON object has no 'answer'"),
    (None, '{"answer": true}', "'answer' must be a string, not a boolean"),
    (None, '{"answer": ["a"]}', "'answer' must be a string, not an array"),
    ("raw_html", '{"selector": {"css": "a"}}', "'selector' must be a string, not an object"),
    ("markdown", '{"text": "Share", "occurrence": 0}', "'occurrence' must be at least 1, not 0"),
    ("markdown", '{"text": "Share", "occurrence": "2"}', "'occurrence' must be a number, not a string"),
    ("indexed_dom", '{"index": 12.5}', "'index' must be a whole number, not 12.5"),
    ("indexed_dom", '{"index": "12"}', "'index' must be a number, not a string"),
    ("indexed_dom", '{"index": NaN}', "no JSON object in the reply"),
    ("screenshot", '{"x": 1e999, "y": 2}', "'x' is not a finite number"),
    ("screenshot", '{"x": -3, "y": 2}', "'x' must be at least 0, not -3"),
]


@pytest.mark.parametrize(("representation", "reply", "expected"), PARSED)
def test_answers_are_read_from_the_first_json_object(
    representation: Representation | None, reply: str, expected: object
) -> None:
    assert parse_answer(reply, fmt(representation)) == expected


@pytest.mark.parametrize(("representation", "reply", "reason"), UNPARSEABLE)
def test_a_reply_without_an_answer_of_the_format_is_unparseable_with_a_reason(
    representation: Representation | None, reply: str, reason: str
) -> None:
    assert parse_answer(reply, fmt(representation)) == Unparseable(reason=reason)
