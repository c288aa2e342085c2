"""The files a finished build holds, one module per file: each owns its whole format, written by
the build and read by ``mintdim.read`` and ``mintdim.check``.

``layout`` (the directory's names), ``manifest``, ``shards`` (unit shards; the shard writer),
``spans``, ``unit_index``, ``sample_index`` (with ``line_bytes``, its exact line reader),
``duplicate_index``, ``unk_index``, ``overflow_index``, ``stats``, ``histogram``.
"""
