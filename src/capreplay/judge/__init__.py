"""The judge: rubric trees scored on the snapshot the agent ran on."""
