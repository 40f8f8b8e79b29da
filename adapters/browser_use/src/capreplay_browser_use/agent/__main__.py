"""Run one agent episode: ``python -m capreplay_browser_use.agent`` speaks the agent protocol on stdin/stdout.

stdout carries protocol lines only. Before anything else is imported, file descriptor 1 is kept for the
protocol and pointed at stderr, so a stray ``print`` (browser-use prints on pause and resume) or a child
process's output cannot corrupt the stream.
"""

import os
import shutil
import sys
import threading

from capreplay_jsonlines.process import log_to_stderr, protocol_stream

from capreplay_browser_use.process import browser_use_scratch

EXIT_GRACE_S = 10.0


def _exit_within(seconds: float, status: int, scratch: str) -> None:
    """Exit with ``status`` after ``seconds`` unless the process has ended by then."""

    def force() -> None:
        sys.stderr.write(f"capreplay_browser_use.agent: still running {seconds:.0f} s after the last line: exiting\n")
        sys.stderr.flush()
        # os._exit skips the scratch folder's clean-up: remove it here.
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(status)

    timer = threading.Timer(seconds, force)
    timer.daemon = True
    timer.start()


def main() -> int:
    """Run the episode the ``start`` line describes; the exit status (0 answered, 1 failed)."""
    out = protocol_stream()
    log_to_stderr()

    import asyncio

    with browser_use_scratch("capreplay-browser-use-agent-") as scratch:
        # Imported here, after the environment and the streams are set: these import browser-use.
        from capreplay_browser_use.agent.harness import Outbox
        from capreplay_browser_use.agent.serve import serve

        with asyncio.Runner() as runner:
            status = runner.run(serve(Outbox(out)))
            # The last line is sent and the harness waits for the exit; browser-use must not hold it up with
            # tasks that ignore cancellation (the runner's close waits for every task).
            _exit_within(EXIT_GRACE_S, status, scratch)
        return status


if __name__ == "__main__":
    sys.exit(main())
