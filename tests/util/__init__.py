"""Tests of capreplay.util: the shared statistics."""
