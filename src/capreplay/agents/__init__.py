"""Agents on the frozen world: the JSON-lines protocol, the harness that runs an episode, the gold agent."""
