"""Run the adapter: ``python -m capreplay_browser_use`` speaks the JSON-lines protocol on stdin/stdout.

stdout carries protocol lines only (:func:`capreplay_jsonlines.process.run_adapter`).
"""

from typing import TextIO

from capreplay_jsonlines.process import run_adapter

from capreplay_browser_use.process import browser_use_scratch


async def serve(out: TextIO) -> None:
    """Serve requests until ``shutdown`` or end of input."""
    # Imported here, after the environment and the streams are set: these import browser-use.
    from capreplay_jsonlines.protocol import Channel, serve

    from capreplay_browser_use.commands import COMMANDS

    await serve(COMMANDS, Channel(out))


if __name__ == "__main__":
    run_adapter("capreplay-browser-use-", serve, browser_use_scratch)
