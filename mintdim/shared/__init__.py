"""Building blocks shared by every room of MintDim: languages, logging, paths, signals, types."""
