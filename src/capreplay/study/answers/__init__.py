"""A model's answers: the prompt that asks, parsing the reply, resolving ACT answers, scoring READ and ACT."""
