"""Benchmark decontamination of a finished build (``mintdim decontaminate``): find, report and
remove the training samples that hold benchmark items, and prove it.

``settings`` (the options) -> ``benchmarks`` (files read through the Source interface) ->
``catalogue`` (values as ids, their content runs; ``ngrams``: hashing and the content rule) ->
``scan`` (the build searched) -> ``findings`` (samples and items contaminated) -> ``job`` (the
directory: ``split/write.py`` writes the clean build) -> ``verification`` (the independent pass),
``report``, and ``check`` (``mintdim verify DIR``).
"""

from mintdim.decontaminate.job import DecontaminationResult, decontaminate

__all__ = ["DecontaminationResult", "decontaminate"]
