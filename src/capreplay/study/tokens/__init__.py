"""Token accounting: o200k_base for text, the image rule for screenshots, per view and per model call."""
