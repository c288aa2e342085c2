"""Decompression bombs: a compressed input whose one line expands to 2 GiB is refused by name,
and memory stays bounded by ``max_line_bytes``, never by the bomb.

Each bomb is real: an 8 MiB run of one byte with no newline, compressed once, its member
(gzip member, zstandard frame, xz or bzip2 stream) repeated 256 times: 2 GiB decompressed from
a file of a few KB to a few MB. Each build runs in a fresh child process, which reports its own
peak RSS (``VmHWM``) and its largest worker's (``RUSAGE_CHILDREN``); the bound is the peak of
the same child building a small ordinary file, plus four times the line limit and a slack. Before
the bound (issue 32), the same children peaked at 248 MiB (gzip, scan) to 8.3 GiB (bzip2, build).
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from mintdim.runner.demo import DEMO_DIR

RUN = 8 << 20
"""The bomb's repeated block: 8 MiB of one byte."""
COPIES = 256
"""2 GiB decompressed."""
LIMIT = 8 << 20
"""``max_line_bytes`` of the builds here."""
SLACK = 48 << 20
"""What a child may hold beyond the control build and four lines: its read-ahead blocks and
decompressor state, a few MiB each (measured: bombs peaked 28-51 MiB above the control's 52-53
MiB, with four lines of 8 MiB allowed 32 of them)."""

COMPRESS = {
    "gz": lambda data: gzip.compress(data, 9),
    "zst": lambda data: zstandard.ZstdCompressor().compress(data),
    "xz": lzma.compress,
    "bz2": bz2.compress,
}

_CHILD = r"""
import json, resource, sys
import mintdim

path, sizes = sys.argv[1], json.loads(sys.argv[2])
outcome = {}
try:
    (
        mintdim.pipeline("unit-build")
        .source.jsonl(files=[path], fields=[["text"]], templates=["{text}"], max_line_bytes=int(sys.argv[5]))
        .tokenizer.sentencepiece([{"path": sys.argv[3]}])
        .units(sizes=sizes, build_batch=[64])
        .output.dir(sys.argv[4], samples_per_shard=[100])
        .run(workers=2, progress=False)
    )
    outcome["error"] = None
except mintdim.MintDimError as err:
    outcome.update(error=type(err).__name__, line=getattr(err, "line", None),
                   file=getattr(err, "file", None), vi=err.message("vi"))
status = open("/proc/self/status").read().split("\n")
outcome["self_kb"] = int(next(l for l in status if l.startswith("VmHWM")).split()[1])
outcome["workers_kb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps(outcome))
"""


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One 2 GiB one-line bomb per codec (a line of ``"`` then 'a' ... never closed)."""
    folder = tmp_path_factory.mktemp("bombs")
    block = b'{"text": "' + b"a" * (RUN - 10)
    made = {}
    for suffix, compress in COMPRESS.items():
        first, rest = compress(block), compress(b"a" * RUN)
        path = folder / f"bomb.jsonl.{suffix}"
        with path.open("wb") as handle:
            handle.write(first)
            for _ in range(COPIES - 1):
                handle.write(rest)
        made[suffix] = path
    return made


def _build(tmp_path: Path, path: Path, sizes: object) -> dict:
    out = tmp_path / f"out-{path.name}-{'auto' if sizes == 'auto' else 'fixed'}"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(path),
            json.dumps(sizes),
            str(DEMO_DIR / "demo_unigram.model"),
            str(out),
            str(LIMIT),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def control_kb(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The peak RSS of the same child building a small ordinary gzip file."""
    folder = tmp_path_factory.mktemp("control")
    path = folder / "small.jsonl.gz"
    rows = "".join(json.dumps({"text": f"sample {i} of the control"}) + "\n" for i in range(500))
    path.write_bytes(gzip.compress(rows.encode()))
    outcome = _build(folder, path, [[16, 32, 64]])
    assert outcome["error"] is None
    return max(outcome["self_kb"], outcome["workers_kb"])


@pytest.mark.parametrize("suffix", list(COMPRESS))
@pytest.mark.parametrize("sizes", [[[16, 32, 64]], "auto"], ids=["build", "auto-scan"])
def test_a_one_line_bomb_is_refused_within_bounded_memory(
    bombs, control_kb, tmp_path, suffix, sizes
):
    """The build (pieces) and the scan of ``sizes="auto"`` (batches) both stop at the line
    limit, naming the file and line 1; neither process holds more than four lines beyond the
    control's peak."""
    path = bombs[suffix]
    assert path.stat().st_size < 8 << 20  # a small file ...
    outcome = _build(tmp_path, path, sizes)
    assert (outcome["error"], outcome["line"], outcome["file"]) == (
        "LineTooLongError",
        1,
        str(path),
    )
    assert f"{LIMIT:,}" in outcome["vi"]
    peak = max(outcome["self_kb"], outcome["workers_kb"]) << 10
    assert peak <= (control_kb << 10) + 4 * LIMIT + SLACK, (suffix, peak >> 20, control_kb >> 10)
