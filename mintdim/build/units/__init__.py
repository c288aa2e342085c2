"""Choosing each sample's unit size and writing fixed-width padded shards."""
