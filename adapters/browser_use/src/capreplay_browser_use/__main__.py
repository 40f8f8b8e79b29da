"""Run the adapter: ``python -m capreplay_browser_use`` speaks the JSON-lines protocol on stdin/stdout.

stdout carries protocol lines only. Before anything else is imported, file descriptor 1 is kept for the
protocol and pointed at stderr, so a stray ``print`` or a child process's output cannot corrupt the stream.
"""

import os
import sys

from capreplay_jsonlines.process import protocol_stream

from capreplay_browser_use.process import browser_use_scratch


def main() -> None:
    """Serve requests until ``shutdown`` or end of input."""
    out = protocol_stream()

    import asyncio
    import logging

    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("CAPREPLAY_ADAPTER_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )

    with browser_use_scratch("capreplay-browser-use-"):
        # Imported here, after the environment and the streams are set: these import browser-use.
        from capreplay_jsonlines.protocol import Channel, serve

        from capreplay_browser_use.commands import COMMANDS

        asyncio.run(serve(COMMANDS, Channel(out)))


if __name__ == "__main__":
    main()
