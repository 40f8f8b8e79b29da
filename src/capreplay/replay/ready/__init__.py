"""Ready-to-send responses: whole HTTP responses laid out in a derived file, built from a snapshot's index and
WARCs, that the replay server sends by offset."""
