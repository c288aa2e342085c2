"""The MintDim version: one place, read by the package, the manifest and the build backend."""

__version__ = "0.1.0"
