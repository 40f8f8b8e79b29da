"""capreplay's browser-use adapter: a JSON-lines subprocess that attaches to capreplay's browser over CDP.

Importing this package turns off browser-use's calls home (telemetry, cloud sync, version check) before
browser-use itself can be imported, so no module of the adapter can reach the network by accident.
"""

import os

# Forced, not defaulted: the adapter runs on frozen snapshots and must never talk to browser-use's servers.
os.environ["ANONYMIZED_TELEMETRY"] = "false"
os.environ["BROWSER_USE_CLOUD_SYNC"] = "false"
os.environ["BROWSER_USE_VERSION_CHECK"] = "false"
# The adapter configures logging itself (stderr only); browser-use's own set-up would add handlers of its own.
os.environ["BROWSER_USE_SETUP_LOGGING"] = "false"

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
