"""Tests of the command line: bad input, interrupted captures, the judge's verbs."""
