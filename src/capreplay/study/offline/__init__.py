"""The study's offline part, with no model: the self-test, the views written to disk, token tables."""
