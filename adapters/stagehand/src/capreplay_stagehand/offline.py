"""The one change the adapter makes to capreplay's Chromium flags: the browser may reach its own CDP port.

Stagehand's Runtime extension drives the browser through a WebSocket it opens, from inside the browser, to the
browser's own DevTools endpoint (``ws://127.0.0.1:PORT/devtools/browser/..``). capreplay's
``--host-resolver-rules`` end with ``MAP * 127.0.0.1:0``, which catches IP literals too, so that socket cannot
open and ``Stagehand.create`` fails with ``RPCError: CDP websocket failed to open``. The adapter picks the
port itself and puts one identity rule for exactly that address and port first; nothing else on the machine,
and nothing off it, becomes reachable.
"""

from __future__ import annotations

import socket

from capreplay_jsonlines.protocol import RequestError

RULES_FLAG = "--host-resolver-rules="
# Stagehand passes these itself (its port, its profile, headless); a second copy would contradict it.
_OWN_FLAGS = ("--remote-debugging-port=", "--remote-debugging-pipe", "--user-data-dir=", "--headless")


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, for the browser's CDP endpoint."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cdp_rule(port: int) -> str:
    """The host-resolver rule that lets the browser reach its own CDP endpoint and nothing more."""
    return f"MAP 127.0.0.1:{port} 127.0.0.1:{port}"


def check_args(args: list[str]) -> None:
    """A RequestError for flags that Stagehand sets itself."""
    clash = [arg for arg in args if arg.startswith(_OWN_FLAGS)]
    if clash:
        raise RequestError(f"'args' must not set what Stagehand sets itself: {', '.join(clash)}")


def launch_args(args: list[str], cdp_port: int) -> list[str]:
    """capreplay's flags, with the CDP rule put first in its ``--host-resolver-rules`` (unchanged without one)."""
    check_args(args)
    return [
        f"{RULES_FLAG}{cdp_rule(cdp_port)}, {arg.removeprefix(RULES_FLAG)}" if arg.startswith(RULES_FLAG) else arg
        for arg in args
    ]
