"""Tests of the test tooling: the synthetic snapshot, strace parsing, the Chromium guard."""
