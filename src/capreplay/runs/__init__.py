"""What every kind of run shares: tasks files, registration, the run log, seeded plans, adapter processes."""
