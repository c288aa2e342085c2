"""Writing a build's output directory: the directory itself (pieces in, shards and indexes out, the manifest last), staging for resume, and the output options."""
