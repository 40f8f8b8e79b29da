"""The real applications to capture: for each, how to start it, the host it is captured under, and its plan.

A plan's actions exercise the traffic the application is here for (run a notebook cell, submit a Gradio
form, run a GraphQL query), and ``shows`` is text the page displays only once that traffic came back, so a
test can tell a replay whose WebSocket messages, events or POST answers were served from one whose were not.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capreplay.testing.apps import gradio_app, graphiql, jupyter
from capreplay.testing.apps.process import Server


@dataclass(frozen=True)
class App:
    """One application as the captures and tests use it."""

    name: str
    host: str
    """The made-up host name the capture maps to the local server (the archive keeps it)."""
    path: str
    """The page to capture, on ``host``."""
    actions: list[dict[str, Any]]
    """The capture plan's actions on that page (the plan format of docs/verbs/capture.md)."""
    shows: str
    """Text in the page only once the application's answer arrived over the traffic it is here for."""
    answer_js: str
    """A JavaScript expression for the page that gives the text where that answer appears."""
    traffic: str
    """What kind of traffic that answer came by, in words for tables."""
    start: Callable[[Path, Path], AbstractContextManager[Server]]
    """``start(cache, work)``: the running server, installed under ``cache`` if needed, its files in ``work``."""

    @property
    def url(self) -> str:
        """The page's URL under its made-up host."""
        return f"http://{self.host}{self.path}"

    def plan(self) -> dict[str, Any]:
        """The capture plan: this one page with its actions."""
        return {"pages": [{"url": self.url, "actions": self.actions}]}

    def map_args(self, server: Server) -> list[str]:
        """The ``--map`` values that send the made-up host to ``server``, and every other host it serves."""
        return [f"{self.host}=127.0.0.1:{server.port}", *server.extra_maps]


JUPYTERLAB = App(
    name="jupyterlab",
    host="lab.app.test",
    path=f"/lab/tree/{jupyter.NOTEBOOK}",
    actions=[
        {"type": "wait_for_network_idle"},
        {"type": "wait", "ms": 3000},  # the kernel starts and its WebSocket opens; no HTTP request says when
        {"type": "click", "selector": jupyter.RUN_BUTTON},  # the markdown cell, then select the code cell
        {"type": "click", "selector": jupyter.RUN_BUTTON},  # the code cell: execute_request over the WebSocket
        {"type": "wait", "ms": 3000},
        {"type": "wait_for_network_idle"},
    ],
    shows=jupyter.CELL_OUTPUT,
    answer_js="[...document.querySelectorAll('.jp-OutputArea-output')].map(e => e.innerText).join('\\n')",
    traffic="WebSocket (kernel channels) + JSON POST (session)",
    start=jupyter.running_jupyterlab,
)

GRADIO = App(
    name="gradio",
    host="gradio.app.test",
    path="/",
    actions=[
        {"type": "wait_for_network_idle"},
        {"type": "fill", "selector": gradio_app.INPUT, "value": gradio_app.NAME},
        {"type": "click", "selector": gradio_app.SUBMIT},  # queue/join (JSON POST), then queue/data (event stream)
        {"type": "wait", "ms": 3000},
        {"type": "wait_for_network_idle"},
    ],
    shows=gradio_app.RESULT,
    answer_js="document.querySelector('#greeting textarea')?.value ?? ''",
    traffic="server-sent events (queue/data) + JSON POST (queue/join)",
    start=gradio_app.running_gradio,
)

GRAPHIQL = App(
    name="graphiql",
    host="graphql.app.test",
    path=graphiql.PATH,
    actions=[
        {"type": "wait_for_network_idle"},  # GraphiQL POSTs the introspection query as it opens
        {"type": "click", "selector": graphiql.RUN_BUTTON},  # the default query, POSTed as JSON
        {"type": "wait", "ms": 1000},
        {"type": "wait_for_network_idle"},
    ],
    shows=graphiql.RESULT,
    answer_js="document.querySelector('.result-window')?.innerText ?? ''",
    traffic="GraphQL over JSON POST",
    start=graphiql.running_graphiql,
)

APPS: dict[str, App] = {app.name: app for app in (JUPYTERLAB, GRADIO, GRAPHIQL)}
