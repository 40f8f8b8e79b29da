"""JupyterLab: a notebook cell run over the kernel's WebSocket, captured and replayed offline.

The cell's output reaches the page only as WebSocket messages (``execute_request`` out; status, stream and
``execute_result`` back), so a replay shows it only if those messages were archived and are served again.
JupyterLab and ipykernel are installed from PyPI into their own environment on first use, then reused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from capreplay.archive.warc.live import (
    RESOURCE_TYPE_HEADER,
    TRUNCATED_HEADER,
    WEBSOCKET_RESOURCE,
    read_websocket_messages,
)
from capreplay.models.manifest import WebSocketCounts
from capreplay.testing.apps.catalog import JUPYTERLAB
from capreplay.testing.apps.jupyter import CELL_OUTPUT
from capreplay.verify.page_loads import verify_pages
from capreplay.verify.sameness import pixel_region
from capreplay.verify.websockets import deviates
from tests.support.realapps import CapturedApp, Look, archive_records, capture_app, replay

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ORDER = (
    "the pixels agree, and with the page order (plain-http requests ordered since their destination is read from "
    "Accept) the CSS rules and panel ids do too; what still differs is the attribute order and tabindex of the "
    "toolbar's web components (FAST buttons set disabled, current-value and tabindex in their own asynchronous "
    "updates), which no response order reaches"
)


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CapturedApp]:
    """JupyterLab started from its package, the notebook run live, captured with its plan, and stopped."""
    yield asyncio.run(capture_app(JUPYTERLAB, tmp_path_factory.mktemp("jupyterlab")))


@pytest.fixture(scope="module")
def replays(captured: CapturedApp) -> list[Look]:
    """Two offline replays of the snapshot, each running the cell again."""
    return [asyncio.run(replay(captured)) for _ in range(2)]


def test_the_live_notebook_runs_its_cell_over_the_websocket(captured: CapturedApp) -> None:
    assert captured.live.error is None
    assert JUPYTERLAB.shows in captured.live.answer
    assert captured.live.ws_frames_received > 0


def test_capture_records_the_notebook_page_and_the_kernel_messages(captured: CapturedApp) -> None:
    assert not captured.result.failed, captured.result.failed
    assert [p.url for p in captured.result.manifest.pages] == [JUPYTERLAB.url]
    records = archive_records(captured.snapshot)
    sockets = [
        (records[i - 1], read_websocket_messages(str(r.url), r.payload, truncated=r.warc_header(TRUNCATED_HEADER)))
        for i, r in enumerate(records)
        if r.rec_type == "resource" and r.warc_header(RESOURCE_TYPE_HEADER) == WEBSOCKET_RESOURCE
    ]
    assert all(h.rec_type == "response" and h.status == 101 for h, _ in sockets)  # each after its handshake
    ((_, kernel),) = [(h, log) for h, log in sockets if "/channels" in log.url]
    assert sum(b'"msg_type":"execute_request"' in m.payload for m in kernel.sent) == 1
    assert any(CELL_OUTPUT.encode() in m.payload and b'"stream"' in m.payload for m in kernel.received)
    # The page keeps its kernel and event connections open: the capture ends them as cut, with what had come.
    assert kernel.ended == "cut"
    assert captured.result.manifest.websockets == WebSocketCounts(
        connections=len(sockets),
        messages=sum(len(log.sent) + len(log.received) for _, log in sockets),
        cut=sum(log.ended == "cut" for _, log in sockets),
    )


def test_replay_shows_the_cell_output_from_the_kernel(replays: list[Look]) -> None:
    for run in replays:
        assert run.error is None
        assert JUPYTERLAB.shows in run.answer, run.story()
        (kernel,) = [c for c in run.websockets if "/channels" in c.url]
        # The page's requests carry ids and dates of their own: matched alike, none missed, every reply played.
        assert kernel.client_messages > 0 and kernel.client_misses == []
        assert kernel.captured > 0 and kernel.served == kernel.captured


def test_every_post_is_served(replays: list[Look]) -> None:
    for run in replays:
        posts = [(url, result) for method, url, result, _ in run.served if method == "POST"]
        assert any("/api/sessions" in url for url, _ in posts), "the session that starts the kernel"
        assert all(result != "miss" for _, result in posts), posts


def test_two_replays_give_the_same_pixels(replays: list[Look]) -> None:
    first, second = replays
    assert JUPYTERLAB.shows in first.answer, first.story()
    assert JUPYTERLAB.shows in second.answer, second.story()
    assert pixel_region(first.screenshot, second.screenshot).fraction == 0.0


@pytest.mark.xfail(strict=True, reason=ORDER)
def test_two_replays_give_the_same_dom(replays: list[Look]) -> None:
    first, second = replays
    assert first.dom == second.dom


def test_verify_serves_every_request_and_every_kernel_message(captured: CapturedApp) -> None:
    (page,) = asyncio.run(verify_pages(captured.snapshot))
    assert page.status == "ok" and page.misses == 0, [r for r in page.requests if r.result == "miss"]
    assert page.websockets and all(not deviates(c) for c in page.websockets), page.websockets
    assert any("/channels" in c.url and c.served > 0 for c in page.websockets)
