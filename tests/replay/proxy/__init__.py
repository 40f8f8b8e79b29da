"""Tests of the snapshot proxy: its responder, its CA, httpx and Chromium through it, and strace on both."""
