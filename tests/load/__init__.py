"""Load tests of the replay server: many clients, hang-ups, a long soak, a large index."""
