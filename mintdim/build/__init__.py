"""The unit-build pipeline: JSONL -> rendered text -> exact tokens -> fixed-width padded unit shards."""
