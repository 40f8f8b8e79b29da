"""Reports of study runs: tables and plots built from a run folder's records (``capreplay report``)."""

REPORT_MD = "report.md"
"""The Markdown of a report, in its output folder."""
REPORT_JSON = "report.json"
"""The same report as JSON."""
