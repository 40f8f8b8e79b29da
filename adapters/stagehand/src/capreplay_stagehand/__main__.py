"""Run the adapter: ``python -m capreplay_stagehand`` speaks the JSON-lines protocol on stdin/stdout.

stdout carries protocol lines only. Before anything else is imported, file descriptor 1 is kept for the
protocol and pointed at stderr, so a stray ``print`` or a child process's output cannot corrupt the stream.
"""

import os
import sys

from capreplay_jsonlines.process import protocol_stream, scratch_folder


def main() -> None:
    """Serve requests until ``shutdown`` or end of input; the browser of an open session is closed at exit."""
    out = protocol_stream()

    import asyncio
    import logging

    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("CAPREPLAY_ADAPTER_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )

    with scratch_folder("capreplay-stagehand-"):
        # Imported here, after the streams are set: these import Stagehand.
        from capreplay_stagehand.commands import COMMANDS, serve_then_close

        asyncio.run(serve_then_close(COMMANDS, out))


if __name__ == "__main__":
    main()
