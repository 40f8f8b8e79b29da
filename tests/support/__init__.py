"""Helpers the test modules share (plain functions, constants, data classes; fixtures stay in conftest files):
WARC files as other tools write them, packets sent off the machine, the replay-with-a-browser context, the
sample workflow task, the load client, the model-client settings, the study-run registration and fake model,
the repository's paths, and the guard's environment for tests not marked browser.
"""
