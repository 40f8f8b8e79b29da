"""Tests of replay: URL matching, nearest-query lookup, schemes and real-world URLs."""
