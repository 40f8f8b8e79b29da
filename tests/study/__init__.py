"""Tests of the study: tasks, representations, prompts, scoring, registration, runs, selftest."""
