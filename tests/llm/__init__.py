"""Tests of the model clients: Anthropic, OpenAI-compatible, the response cache, the fake, no key leaks."""
