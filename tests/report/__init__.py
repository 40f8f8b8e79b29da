"""Tests of the reports: the study run's and the agents' tables, their figures and their plots."""
