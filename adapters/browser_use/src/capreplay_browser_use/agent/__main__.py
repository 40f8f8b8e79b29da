"""Run one agent episode: ``python -m capreplay_browser_use.agent`` speaks the agent protocol on stdin/stdout.

stdout carries protocol lines only. Before anything else is imported, file descriptor 1 is kept for the
protocol and pointed at stderr, so a stray ``print`` (browser-use prints on pause and resume) or a child
process's output cannot corrupt the stream.
"""

import os
import sys
import threading
from typing import TextIO


def _protocol_stream() -> TextIO:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


EXIT_GRACE_S = 10.0


def _exit_within(seconds: float, status: int) -> None:
    """Exit with ``status`` after ``seconds`` unless the process has ended by then."""

    def force() -> None:
        sys.stderr.write(f"capreplay_browser_use.agent: still running {seconds:.0f} s after the last line: exiting\n")
        sys.stderr.flush()
        os._exit(status)

    timer = threading.Timer(seconds, force)
    timer.daemon = True
    timer.start()


def main() -> int:
    """Run the episode the ``start`` line describes; the exit status (0 answered, 1 failed)."""
    out = _protocol_stream()

    import asyncio
    import logging
    import tempfile

    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("CAPREPLAY_ADAPTER_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
    with tempfile.TemporaryDirectory(prefix="capreplay-browser-use-agent-") as scratch:
        # Everything browser-use writes goes to one folder, removed at exit: it makes temporary folders of its
        # own (downloads, profile, the agent's files and screenshots; one already on import) and never removes
        # them. Its config folder too, forced rather than defaulted: browser-use reads settings (even a default
        # model) from there, and a user's would change the agent.
        tempfile.tempdir = scratch
        os.environ["BROWSER_USE_CONFIG_DIR"] = os.path.join(scratch, "config")
        # Costs would need browser-use's price list, fetched from the network; capreplay counts tokens itself.
        os.environ["BROWSER_USE_CALCULATE_COST"] = "false"

        # Imported here, after the environment and the streams are set: these import browser-use.
        from capreplay_browser_use.agent.harness import Outbox
        from capreplay_browser_use.agent.serve import serve

        with asyncio.Runner() as runner:
            status = runner.run(serve(Outbox(out)))
            # The last line is sent and the harness waits for the exit; browser-use must not hold it up with
            # tasks that ignore cancellation (the runner's close waits for every task).
            _exit_within(EXIT_GRACE_S, status)
        return status


if __name__ == "__main__":
    sys.exit(main())
