"""A build and its benchmarks read, checked and numbered: what the finder, the verification
pass and ``mintdim verify DIR`` share."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mintdim.build.formats import manifest as build_manifest
from mintdim.build.tokenizer import Encoder, load_encoder
from mintdim.decontaminate.benchmarks import Benchmark, read_benchmark
from mintdim.decontaminate.catalogue import Catalogue, catalogue
from mintdim.decontaminate.settings import Settings
from mintdim.errors import PackedDecontaminateError, TokenizerChangedError
from mintdim.read.reader import open_build
from mintdim.shared import durable
from mintdim.split.samples import BuildSamples, read_build

__all__ = ["Prepared", "prepare"]


@dataclass(frozen=True, slots=True, eq=False)
class Prepared:
    """A build and its benchmarks read and numbered: what the finder and the verifier share."""

    settings: Settings
    samples: BuildSamples
    encoder: Encoder | None
    catalogue: Catalogue
    tokenizer_sha256: str


def prepare(build: str | os.PathLike[str], settings: Settings) -> Prepared:
    """Read the build (``NotABuildError``, ``ChangedSinceBuildError``), check its tokenizer
    (``TokenizerChangedError``) and read and number the benchmarks, the two at once (the
    benchmarks need only the build's manifest)."""
    content = open_build(build).manifest
    # A packed row holds several samples: neither a clean copy (whole records) nor the shard
    # scan (one sample a row) applies to it.
    if "pack" in content["units"]:
        raise PackedDecontaminateError(build=os.fspath(build))
    spec = build_manifest.recorded_tokenizer(content)
    expected = content["tokenizer"]["sha256"]
    encoder = None
    if settings.match == "tokens":
        try:
            found = durable.file_sha256(Path(spec.abs_path))
        except FileNotFoundError:
            found = ""
        if found != expected:
            raise TokenizerChangedError(
                build=os.fspath(build), path=spec.path, expected=expected, found=found
            )
        encoder = load_encoder(spec)

    def numbered() -> Catalogue:
        benchmarks: list[Benchmark] = [read_benchmark(a, spec) for a in settings.against]
        return catalogue(benchmarks, encoder, settings.ngram, settings.min_tokens)

    with ThreadPoolExecutor(1) as pool:
        values = pool.submit(numbered)
        samples = read_build(build)
        cat = values.result()
    return Prepared(settings, samples, encoder, cat, expected)
