"""Helpers for testing code that uses capreplay: shipped in the package so users can use them too."""
