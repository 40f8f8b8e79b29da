"""The snapshot folder: its manifest of sha256 digests, and the check that nothing in it changed."""
