"""What tests, benchmarks and a user trying capreplay without the outside world run: the fixture sites
(``fixtures/``: the local HTTPS origins the demo captures, the world of workflow tasks, the study's pages), the
fake model API (dry-run a study or an agent run without a key), real applications started from their packages
(``apps/``), pywb as a reference replay, synthetic snapshots at realistic sizes and servers as child processes.
Helpers only the tests use live in tests/support/."""
