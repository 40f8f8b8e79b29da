"""capreplay's Stagehand adapter: a JSON-lines subprocess that drives Stagehand's own Chromium, offline.

Stagehand 4's Python SDK runs everything in its bundled "Stagehand Runtime" Chrome extension, loaded into a
Chromium that Stagehand launches itself; nothing is fetched at run time. It calls home only when asked to:
Browserbase with an API key, a model for act/observe/extract, or a trace endpoint. The adapter asks for none.
"""

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
