"""A fake model API on 127.0.0.1 that answers from a script, so the real SDKs can be tested over real HTTP.

It speaks the Anthropic Messages API (``POST /v1/messages``, ``POST /v1/messages/count_tokens``) with the
response shape, ``request-id`` header and usage the ``anthropic`` SDK parses, and OpenAI Chat Completions
(``POST /v1/chat/completions``, with an ``x-request-id`` header) and OpenAI-compatible embeddings
(``POST /v1/embeddings``). Point ``AsyncAnthropic(base_url=...)`` at :attr:`FakeLLM.base_url` and an
OpenAI-compatible client at :attr:`FakeLLM.openai_base_url`.

Answers come from a script (see :data:`Script`): one answer for every call, a list used in order, a dict
whose first key found in the prompt text picks the answer, or a function of the :class:`Received` request.
A :class:`Reply` can also be an error status (429, 500, ...) or come after a delay (to provoke timeouts).
Token-counting requests are answered, and recorded, but never consume the script.

A :class:`Reply` with ``tool_input`` answers a Messages API call with a ``tool_use`` block (after a text
block if ``text`` is not empty) and stop reason ``tool_use``: structured output as clients that force a tool
through ``tool_choice`` read it. The block names the tool that ``tool_choice`` forces, else the request's
first tool; a request that offers no tool cannot get such a reply (status 500, a script mistake).

Tokens are counted by a stated rule, so tests can check arithmetic: a text costs ``ceil(characters / 4)``
tokens (the system text and each text block counted apart), an image ``ceil(width * height / 750)`` (the
approximation Anthropic documents for images), and an answer's text ``ceil(characters / 4)``; a tool
reply adds the tokens of its input's JSON (``json.dumps`` with default separators). A reply longer than the
request's ``max_tokens`` is cut to ``4 * max_tokens`` characters and stops with ``max_tokens`` (``length``
in Chat Completions); a cut tool reply loses its ``tool_use`` block.

Embeddings follow a stated rule too, so tests can work out similarities by hand (:func:`fake_embedding`):
a text's words are its runs of letters, digits and underscores after lower-casing (``\\w+``); word ``w``
falls in bucket ``int.from_bytes(sha256(w.encode("utf-8")).digest()[:8], "big") % dimension``; the vector
holds each bucket's count of words, divided by the vector's Euclidean length (all zeros for a text with no
word). The dimension is 64, or the request's ``dimensions``. Texts of distinct buckets sharing ``k`` of
their ``m`` and ``n`` words (each once) thus have cosine ``k / sqrt(m * n)``. The response lists the vectors
in reverse order of ``index`` (the API ties a vector to its text by index, not by position), and its usage
counts the texts' tokens by the rule above. Embeddings calls never consume the script: they follow their own
list of :class:`Reply` (``embedding_script``), one per call in order, where a reply with an error status
answers with that error and any other answers by the rule (after its delay); past the list's end every
call is answered by the rule. As the real API does, an empty text, a token array or more than 2048 texts
get status 400.

Every request is kept in :attr:`FakeLLM.received` in arrival order, with its body and headers.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import math
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from aiohttp import web

from capreplay.util.local_server import LocalServer

Api = Literal["messages", "count_tokens", "chat_completions", "embeddings"]

CHARS_PER_TOKEN = 4
PIXELS_PER_IMAGE_TOKEN = 750
EMBEDDING_DIMENSION = 64
"""The length of the fake's vectors unless a request asks for ``dimensions``."""
MAX_EMBEDDING_INPUTS = 2048
_WORD = re.compile(r"\w+")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# error.type of each status in the Messages API's error body
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def text_tokens(text: str) -> int:
    """Tokens of ``text`` by the fake's rule: one per four characters, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG file from its header; ValueError if it is not a PNG."""
    if len(png) < 24 or not png.startswith(_PNG_SIGNATURE) or png[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def image_tokens(png: bytes) -> int:
    """Tokens of a PNG image by the fake's rule: one per 750 pixels, rounded up."""
    width, height = png_size(png)
    return math.ceil(width * height / PIXELS_PER_IMAGE_TOKEN)


def word_bucket(word: str, dimension: int = EMBEDDING_DIMENSION) -> int:
    """The bucket of a lower-cased word in the fake's vectors: its sha256's first 8 bytes modulo ``dimension``."""
    return int.from_bytes(hashlib.sha256(word.encode("utf-8")).digest()[:8], "big") % dimension


def fake_embedding(text: str, dimension: int = EMBEDDING_DIMENSION) -> list[float]:
    """The fake's vector of ``text``: its hashed bag of lower-cased words, of Euclidean length 1 (or all zeros)."""
    counts = [0] * dimension
    for word in _WORD.findall(text.lower()):
        counts[word_bucket(word, dimension)] += 1
    norm = math.sqrt(sum(c * c for c in counts))
    return [c / norm if norm else 0.0 for c in counts]


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a text, a tool call, or an error status; any after ``delay_s`` seconds."""

    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    stop_reason: str = "end_turn"
    output_tokens: int | None = None
    """Reported output tokens; None counts them from ``text`` by the fake's rule."""
    message: str = "scripted error"
    """The error message of a non-200 reply."""
    tool_input: dict[str, Any] | None = None
    """If set, the reply calls a tool with this input (Messages API only); see the module docstring."""

    def tokens(self) -> int:
        """Output tokens of the reply: ``output_tokens`` if given, else counted by the fake's rule."""
        if self.output_tokens is not None:
            return self.output_tokens
        tool = text_tokens(json.dumps(self.tool_input)) if self.tool_input is not None else 0
        return text_tokens(self.text) + tool


@dataclass
class Received:
    """One request the fake server received."""

    api: Api
    body: dict[str, Any]
    headers: dict[str, str]
    texts: list[str] = field(default_factory=list)
    """The system text (if any), then every text block, in order."""
    images: list[bytes] = field(default_factory=list)
    """Every image, decoded."""

    @property
    def prompt(self) -> str:
        """All texts joined by newlines: what a dict script searches for its keys."""
        return "\n".join(self.texts)

    @property
    def input_tokens(self) -> int:
        """Input tokens by the fake's rule."""
        return sum(text_tokens(t) for t in self.texts) + sum(image_tokens(i) for i in self.images)


Answer = Reply | str
Script = Answer | Sequence[Answer] | Mapping[str, Answer] | Callable[[Received], Answer]
"""A string or :class:`Reply` answers every call; a list answers calls in order; a dict answers with the
value of its first key that occurs in the prompt; a function is asked for each call."""


class BadRequest(Exception):
    """A request the real API would refuse; answered with status ``status``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _image_bytes(data: object) -> bytes:
    if not isinstance(data, str):
        raise BadRequest("image data must be a base64 string")
    try:
        png = base64.b64decode(data, validate=True)
        png_size(png)
    except (binascii.Error, ValueError) as e:
        raise BadRequest(f"image is not a base64-encoded PNG: {e}") from e
    return png


def _read_anthropic_block(block: object, received: Received) -> None:
    if not isinstance(block, dict) or block.get("type") not in ("text", "image"):
        raise BadRequest(f"unsupported content block: {block!r:.80}")
    if block["type"] == "text":
        received.texts.append(str(block["text"]))
        return
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64" or source.get("media_type") != "image/png":
        raise BadRequest("image source must be base64 image/png")
    received.images.append(_image_bytes(source.get("data")))


def read_anthropic(api: Api, body: dict[str, Any], headers: dict[str, str]) -> Received:
    """Check a Messages API request as the real API would, and collect its texts and images."""
    if not headers.get("x-api-key") and not headers.get("authorization"):
        raise BadRequest("x-api-key header is required", 401)
    if not headers.get("anthropic-version"):
        raise BadRequest("anthropic-version header is required")
    if not isinstance(body.get("model"), str):
        raise BadRequest("model: field required")
    if api == "messages" and not isinstance(body.get("max_tokens"), int):
        raise BadRequest("max_tokens: field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: at least one message is required")
    received = Received(api, body, headers)
    system = body.get("system")
    if isinstance(system, str):
        received.texts.append(system)
    elif isinstance(system, list):
        for block in system:
            _read_anthropic_block(block, received)
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            received.texts.append(content)
        elif isinstance(content, list):
            for block in content:
                _read_anthropic_block(block, received)
        else:
            raise BadRequest("each message needs content")
    return received


def read_openai(body: dict[str, Any], headers: dict[str, str]) -> Received:
    """Check a Chat Completions request and collect its texts and images (data URLs)."""
    if not isinstance(body.get("model"), str):
        raise BadRequest("model: field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: at least one message is required")
    received = Received("chat_completions", body, headers)
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            raise BadRequest("each message needs content")
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "text":
                received.texts.append(str(part["text"]))
            elif isinstance(part, dict) and part.get("type") == "image_url":
                image_url = part.get("image_url")
                url = str(image_url.get("url", "")) if isinstance(image_url, dict) else ""
                prefix = "data:image/png;base64,"
                if not url.startswith(prefix):
                    raise BadRequest("image_url must be a data:image/png;base64 URL")
                received.images.append(_image_bytes(url[len(prefix) :]))
            else:
                raise BadRequest(f"unsupported content part: {part!r:.80}")
    return received


def read_embeddings(body: dict[str, Any], headers: dict[str, str]) -> Received:
    """Check an embeddings request as the real API would and collect its texts (``input``: a string or strings)."""
    if not isinstance(body.get("model"), str):
        raise BadRequest("model: field required")
    given = body.get("input")
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise BadRequest("input: a string or a non-empty list of strings is required")
    if len(texts) > MAX_EMBEDDING_INPUTS:
        raise BadRequest(f"input: at most {MAX_EMBEDDING_INPUTS} texts per request")
    if any(not t for t in texts):
        raise BadRequest("input: texts must not be empty")
    dimensions = body.get("dimensions", EMBEDDING_DIMENSION)
    if not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions < 1:
        raise BadRequest("dimensions: a positive integer is required")
    return Received("embeddings", body, headers, texts=list(texts))


class FakeLLM(LocalServer):
    """The running fake API; ``start()`` binds a free port on 127.0.0.1, ``stop()`` releases it."""

    # handler_cancellation: a client that timed out hangs up, and its delayed handler must end with it.
    runner_options: ClassVar[dict[str, Any]] = {"handler_cancellation": True, "shutdown_timeout": 1.0}

    def __init__(
        self, script: Script = "", *, default: Answer | None = None, embedding_script: Sequence[Reply] = ()
    ) -> None:
        """Answer from ``script``; ``default`` answers calls the script has no answer for (else status 500).

        ``embedding_script`` holds the replies of the first embeddings calls, in order (see the module docstring).
        """
        self.script = script
        self.default = default
        self.embedding_script = list(embedding_script)
        super().__init__()
        self.received: list[Received] = []
        self._scripted = 0
        self._embedded = 0

    @property
    def base_url(self) -> str:
        """The Anthropic SDK's ``base_url`` (the SDK adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """An OpenAI-compatible client's base URL (it adds ``/chat/completions``)."""
        return f"{self.base_url}/v1"

    def calls(self, api: Api) -> list[Received]:
        """The received requests of one API."""
        return [r for r in self.received if r.api == api]

    def answer(self, received: Received) -> Reply:
        """The scripted answer to ``received`` (consumes one list entry)."""
        script = self.script
        index, self._scripted = self._scripted, self._scripted + 1
        found: Answer | None
        if isinstance(script, Reply | str):
            found = script
        elif callable(script):
            found = script(received)
        elif isinstance(script, Mapping):
            found = next((a for marker, a in script.items() if marker in received.prompt), None)
        else:
            found = script[index] if index < len(script) else None
        if found is None:
            found = self.default
        if found is None:
            return Reply(status=500, message=f"the script has no answer for call {index}")
        return Reply(text=found) if isinstance(found, str) else found

    def embedding_reply(self) -> Reply | None:
        """The scripted reply of the next embeddings call, or None when the list is spent (answer by the rule)."""
        index, self._embedded = self._embedded, self._embedded + 1
        return self.embedding_script[index] if index < len(self.embedding_script) else None

    def application(self) -> web.Application:
        """The API's routes."""
        return make_app(self)


FAKE_KEY = web.AppKey("fake_llm", FakeLLM)


def _cut(reply: Reply, max_tokens: int | None) -> tuple[str, int, str]:
    """The reply's text, output tokens and stop reason once held to ``max_tokens``."""
    tokens = reply.tokens()
    if max_tokens is not None and tokens > max_tokens:
        return reply.text[: max_tokens * CHARS_PER_TOKEN], max_tokens, "max_tokens"
    return reply.text, tokens, "tool_use" if reply.tool_input is not None else reply.stop_reason


def tool_name(body: dict[str, Any]) -> str | None:
    """The tool a Messages API request forces through ``tool_choice``, else its first tool (None if none)."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and isinstance(choice.get("name"), str):
        return str(choice["name"])
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict) and isinstance(tools[0].get("name"), str):
        return str(tools[0]["name"])
    return None


def _anthropic_content(reply: Reply, text: str, stop_reason: str, name: str, block_id: str) -> list[dict[str, Any]]:
    """The content blocks of a Messages API answer: the text (if any, or if no tool is called), the tool call."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text or reply.tool_input is None else []
    if reply.tool_input is not None and stop_reason == "tool_use":
        content.append({"type": "tool_use", "id": block_id, "name": name, "input": reply.tool_input})
    return content


async def _read(request: web.Request, api: Api) -> tuple[FakeLLM, Received | BadRequest, str]:
    """Record one request; returns the fake, the parsed request or why it is bad, and the request id."""
    fake = request.app[FAKE_KEY]
    headers = {k.lower(): v for k, v in request.headers.items()}
    raw = await request.read()
    try:
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("not an object")
    except ValueError:
        fake.received.append(Received(api, {}, headers))
        return fake, BadRequest("the body is not a JSON object"), f"req_fake_{len(fake.received):04d}"
    try:
        received: Received | BadRequest
        if api == "embeddings":
            received = read_embeddings(body, headers)
        elif api == "chat_completions":
            received = read_openai(body, headers)
        else:
            received = read_anthropic(api, body, headers)
    except BadRequest as e:
        received = e
    fake.received.append(received if isinstance(received, Received) else Received(api, body, headers))
    return fake, received, f"req_fake_{len(fake.received):04d}"


def _anthropic_error(status: int, message: str, request_id: str) -> web.Response:
    error_type = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
    body = {"type": "error", "error": {"type": error_type, "message": message}, "request_id": request_id}
    return web.json_response(body, status=status, headers={"request-id": request_id})


def _openai_error(status: int, message: str, request_id: str) -> web.Response:
    body = {"error": {"message": message, "type": "rate_limit_exceeded" if status == 429 else "server_error"}}
    return web.json_response(body, status=status, headers={"x-request-id": request_id})


async def _scripted(
    request: web.Request, api: Api, error: Callable[[int, str, str], web.Response]
) -> tuple[FakeLLM, Received, str, Reply] | web.Response:
    """The request read and its scripted reply, after the reply's delay; or the error response to send."""
    fake, received, request_id = await _read(request, api)
    if isinstance(received, BadRequest):
        return error(received.status, str(received), request_id)
    reply = fake.answer(received)
    await asyncio.sleep(reply.delay_s)
    if reply.status != 200:
        return error(reply.status, reply.message, request_id)
    return fake, received, request_id, reply


async def _messages(request: web.Request) -> web.Response:
    scripted = await _scripted(request, "messages", _anthropic_error)
    if isinstance(scripted, web.Response):
        return scripted
    fake, received, request_id, reply = scripted
    name = tool_name(received.body)
    if reply.tool_input is not None and name is None:
        return _anthropic_error(500, "the scripted reply calls a tool, but the request offers none", request_id)
    text, output_tokens, stop_reason = _cut(reply, received.body.get("max_tokens"))
    usage = {
        "input_tokens": received.input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "service_tier": "standard",
    }
    body = {
        "id": f"msg_fake_{len(fake.received):04d}",
        "type": "message",
        "role": "assistant",
        "model": received.body["model"],
        "content": _anthropic_content(reply, text, stop_reason, name or "", f"toolu_fake_{len(fake.received):04d}"),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    return web.json_response(body, headers={"request-id": request_id})


async def _count_tokens(request: web.Request) -> web.Response:
    _, received, request_id = await _read(request, "count_tokens")
    if isinstance(received, BadRequest):
        return _anthropic_error(received.status, str(received), request_id)
    return web.json_response({"input_tokens": received.input_tokens}, headers={"request-id": request_id})


async def _chat_completions(request: web.Request) -> web.Response:
    scripted = await _scripted(request, "chat_completions", _openai_error)
    if isinstance(scripted, web.Response):
        return scripted
    fake, received, request_id, reply = scripted
    if reply.tool_input is not None:
        return _openai_error(500, "tool replies are answered on the Messages API only", request_id)
    max_tokens = received.body.get("max_completion_tokens", received.body.get("max_tokens"))
    text, output_tokens, stop_reason = _cut(reply, max_tokens)
    body = {
        "id": f"chatcmpl-fake{len(fake.received):04d}",
        "object": "chat.completion",
        "created": 0,
        "model": received.body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": _OPENAI_STOP.get(stop_reason, stop_reason),
            }
        ],
        "usage": {
            "prompt_tokens": received.input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": received.input_tokens + output_tokens,
        },
    }
    return web.json_response(body, headers={"x-request-id": request_id})


async def _embeddings(request: web.Request) -> web.Response:
    fake, received, request_id = await _read(request, "embeddings")
    if isinstance(received, BadRequest):
        return _openai_error(received.status, str(received), request_id)
    reply = fake.embedding_reply()
    if reply is not None:
        await asyncio.sleep(reply.delay_s)
        if reply.status != 200:
            return _openai_error(reply.status, reply.message, request_id)
    dimension = int(received.body.get("dimensions", EMBEDDING_DIMENSION))
    data = [
        {"object": "embedding", "index": i, "embedding": fake_embedding(text, dimension)}
        for i, text in enumerate(received.texts)
    ]
    tokens = sum(text_tokens(t) for t in received.texts)
    body = {
        "object": "list",
        "data": data[::-1],
        "model": received.body["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
    return web.json_response(body, headers={"x-request-id": request_id})


def make_app(fake: FakeLLM) -> web.Application:
    """The aiohttp application of ``fake``: every API's routes."""
    app = web.Application(client_max_size=64 * 1024 * 1024)  # screenshots make large bodies
    app[FAKE_KEY] = fake
    app.router.add_post("/v1/messages", _messages)
    app.router.add_post("/v1/messages/count_tokens", _count_tokens)
    app.router.add_post("/v1/chat/completions", _chat_completions)
    app.router.add_post("/v1/embeddings", _embeddings)
    return app
