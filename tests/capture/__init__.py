"""Tests of capture: the proxy addon, the crawl and the capture plan."""
