"""Tests of verification: why a request missed, and screenshot sameness."""
