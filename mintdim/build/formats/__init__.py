"""The output directory and every audit file written into it."""
