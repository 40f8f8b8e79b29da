"""One page session of the study: the offline page, what is read from it, and the ground truth of its targets."""
