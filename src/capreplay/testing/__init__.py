"""What a user runs to try capreplay without the outside world: the fake model API (dry-run a study or an
agent run without a key), and what the benchmark scripts run: pywb as a reference replay, synthetic
snapshots at realistic sizes, servers as child processes. Helpers only the tests use live in tests/support/."""
