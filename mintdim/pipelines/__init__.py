"""Pipelines MintDim can run; each lives in its own subpackage and registers in ``mintdim.registry``."""
