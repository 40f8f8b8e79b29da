"""The adapter's commands, by name. A new command is one handler here (``protocol.Handler``)."""

from __future__ import annotations

import platform
from collections.abc import Mapping
from importlib.metadata import version
from typing import TextIO

from capreplay_jsonlines.protocol import Channel, Emit, Handler, Json, serve

from capreplay_stagehand import PROTOCOL_VERSION, __version__
from capreplay_stagehand.load import close_page, open_page
from capreplay_stagehand.locate import xpath_of
from capreplay_stagehand.session import close_current
from capreplay_stagehand.snapshot import resolve, snapshot


async def hello(request: Json, emit: Emit) -> Json:
    """Versions of the adapter, its protocol, Stagehand and Python, and the commands it knows."""
    return {
        "adapter": __version__,
        "protocol": PROTOCOL_VERSION,
        "stagehand": version("stagehand"),
        "python": platform.python_version(),
        "commands": sorted([*COMMANDS, "shutdown"]),
    }


COMMANDS: dict[str, Handler] = {
    "hello": hello,
    "open": open_page,
    "snapshot": snapshot,
    "resolve": resolve,
    "xpath_of": xpath_of,
    "close": close_page,
}


async def serve_then_close(commands: Mapping[str, Handler], out: TextIO) -> None:
    """Serve requests; the open browser is closed however serving ends (shutdown, end of input, a crash)."""
    try:
        await serve(commands, Channel(out))
    finally:
        await close_current()
