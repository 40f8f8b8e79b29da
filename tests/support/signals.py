"""Child processes that a test interrupts with SIGINT, as Ctrl-C in a terminal would."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` of such a child: SIGINT's default disposition.

    A shell without job control starts background jobs with SIGINT ignored (``nohup cmd &``, a CI runner's
    script), and an ignored signal stays ignored across exec; Python then installs no KeyboardInterrupt
    handler, and the SIGINT the test sends would do nothing.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
