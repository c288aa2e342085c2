"""The build: what writes a MintDim build directory, in the order of its flow.

api.py        the fluent ``pipeline("unit-build")`` job; ``validate.py`` resolves it into the
              frozen plan of ``contracts.py`` before anything is read
runtime.py    the map of a build: pieces -> executor (workers / Ray) -> assembly -> finish
source/       1. records from the input files, 2. rendered through the templates
tokenizer/    3. exact tokens (reference library or the parity-guarded fast engine)
units/        4. the smallest fixed unit size that holds each sample (and the planner)
batch.py      steps 1-4 for one batch of lines, in a worker
write/        5-6. the output directory: shards, indexes, staging for resume, the manifest last
formats/      the format of every file a build holds, shared with ``read`` and ``check``
"""
