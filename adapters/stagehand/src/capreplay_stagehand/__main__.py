"""Run the adapter: ``python -m capreplay_stagehand`` speaks the JSON-lines protocol on stdin/stdout.

stdout carries protocol lines only (:func:`capreplay_jsonlines.process.run_adapter`).
"""

from typing import TextIO

from capreplay_jsonlines.process import run_adapter


async def serve(out: TextIO) -> None:
    """Serve requests until ``shutdown`` or end of input; the browser of an open session is closed at exit."""
    # Imported here, after the streams are set: these import Stagehand.
    from capreplay_stagehand.commands import COMMANDS, serve_then_close

    await serve_then_close(COMMANDS, out)


if __name__ == "__main__":
    run_adapter("capreplay-stagehand-", serve)
