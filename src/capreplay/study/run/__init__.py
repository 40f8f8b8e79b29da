"""A pre-registered study run: its tasks, the call plan over cells, and the executor that resumes."""
