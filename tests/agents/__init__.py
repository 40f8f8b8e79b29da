"""Tests of the agent harness, its protocol, the gold agent and the browser-use adapter."""
