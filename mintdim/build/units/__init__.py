"""Units: checking the declared sizes, the exact planner (``sizes="auto"``, ``mintdim plan``),
assigning each sample the smallest unit that holds it, and what happens to longer ones."""
