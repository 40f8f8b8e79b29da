"""Tests of the judge: checks, values, rubric scoring, episodes, metrics and agreement with humans."""
