"""Tests of the browser's determinism: the frozen clock, flags, settled rendering, scrolling and load-more."""
