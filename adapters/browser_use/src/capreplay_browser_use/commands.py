"""The adapter's commands, by name. A new command is one handler here (``protocol.Handler``)."""

from __future__ import annotations

import platform
from importlib.metadata import version

from capreplay_jsonlines.protocol import Emit, Handler, Json

from capreplay_browser_use import PROTOCOL_VERSION, __version__
from capreplay_browser_use.indexed_dom import indexed_dom


async def hello(request: Json, emit: Emit) -> Json:
    """Versions of the adapter, its protocol, browser-use and Python, and the commands it knows."""
    return {
        "adapter": __version__,
        "protocol": PROTOCOL_VERSION,
        "browser_use": version("browser-use"),
        "python": platform.python_version(),
        "commands": sorted([*COMMANDS, "shutdown"]),
    }


COMMANDS: dict[str, Handler] = {"hello": hello, "indexed_dom": indexed_dom}
