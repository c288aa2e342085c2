"""Building blocks shared by every room of MintDim: languages, logging, paths, types, and work
run beside the main process."""
