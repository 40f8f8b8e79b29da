"""Helpers only the tests use: WARC files as other tools write them, packets sent off the machine."""
