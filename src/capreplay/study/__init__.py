"""The representation study: page representations, token counting, READ/ACT scoring and runs."""
