"""Checking a finished build: ``verify`` (the build against its own manifest and formats) and the deep check (its records against the inputs, encoded again)."""
