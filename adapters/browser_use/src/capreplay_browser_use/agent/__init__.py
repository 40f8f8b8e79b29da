"""Agent mode: browser-use's own agent runs a capreplay task in the harness's browser.

``python -m capreplay_browser_use.agent`` speaks capreplay's agent protocol (``capreplay.agents.protocol``;
the shapes are copied in :mod:`.messages`): it reads the ``start`` line, attaches to the harness's browser
over CDP, runs browser-use's ``Agent`` with browser-use's ``ChatAnthropic``, sends a ``step`` line for each
action and waits for its ``ack``, and ends with one ``answer`` line (exit status 0) or one ``error`` line
(exit status 1).

Environment: ``ANTHROPIC_API_KEY`` (required, the agent's own key), ``ANTHROPIC_BASE_URL`` (optional; the
model settings' ``base_url`` wins), ``CAPREPLAY_ADAPTER_LOG_LEVEL`` (stderr logging, default ``WARNING``).
Telemetry, cloud sync and the version check are forced off, and browser-use's config folder is a private
temporary one, so a user's ``~/.config/browseruse`` cannot change the agent.

Nothing here is imported by the package itself: importing browser-use must wait until the entry point has
set the environment and the streams up.
"""
