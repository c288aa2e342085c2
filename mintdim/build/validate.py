"""Whole-job validation: declarations in, a frozen ``BuildPlan`` (and loaded tokenizers) out.

Order: completeness, then the shape and mapping of every block without touching the filesystem,
then files and directories, then tokenizer loading and the template/tokenizer contract. Every
check runs before the first byte is written; the first failing rule raises its named error.
A scan (``validate_scan``) checks only what it reads: source, tokenizer and build_batch.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import replace

from mintdim.build.config import UnitBuildConfig
from mintdim.build.contracts import (
    BuildPlan,
    FilePlan,
    OutputPlan,
    Template,
    TokenizerInfo,
    TokenizerSpec,
    record_kind,
)
from mintdim.build.rules import per_file
from mintdim.build.source import open_source
from mintdim.build.source import validate as source_validate
from mintdim.build.tokenizer import Encoder, parity
from mintdim.build.tokenizer import validate as tokenizer_validate
from mintdim.build.tokenizer.fast import FastEncoder
from mintdim.build.units.validate import auto_units, build_batches, unit_pack, unit_settings
from mintdim.build.write import validate as output_validate
from mintdim.errors import PipelineValidationError, TokenizerMappingError
from mintdim.paths import resolve, same_place_key

__all__ = ["SCAN_BUILD_BATCH", "validate", "validate_scan"]

SCAN_BUILD_BATCH = 4096
"""Lines per batch of a scan whose job declares no ``units.build_batch``."""

_SCAN_NEEDS = ("source.files", "source.fields", "source.templates", "tokenizer")


def validate(
    config: UnitBuildConfig, resume: bool = False
) -> tuple[BuildPlan, dict[TokenizerSpec, Encoder]]:
    """Check every declaration; return the plan and the tokenizers it loaded.

    ``resume``: an output directory may hold an unfinished build to continue.
    """
    files, schemas, tokenizers = _inputs(config, config.missing())
    count = len(files)
    auto = auto_units(config.sizes, config.unit_plan)
    pack = unit_pack(config.pack)
    if auto is None:
        units = unit_settings(config.sizes, config.build_batch, count)
    else:  # planned per output directory after the scan
        units = [((), batch) for batch in build_batches(config.build_batch, count)]
    dirs = output_validate.output_dirs(config.output_dir, count)
    shard_sizes = output_validate.samples_per_shard(config.samples_per_shard, count)
    places = [same_place_key(spec.abs_path, "tokenizer.path") for spec in tokenizers]
    settings = [
        {
            # Two spellings of one tokenizer file are one tokenizer.
            "tokenizer": f"{tokenizers[i].kind}: {places[i]}" + _options_text(tokenizers[i]),
            "units.sizes": "auto" if auto else str(list(units[i][0])),
            "output.samples_per_shard": str(shard_sizes[i]),
        }
        for i in range(count)
    ]
    groups = output_validate.group_outputs(dirs, settings, files)
    absolute = source_validate.check_files_exist(files)
    formats = source_validate.file_formats(config.source_kind, files, absolute)
    output_validate.check_directories_usable([dirs[members[0]] for members in groups], resume)

    output_of = {i: g for g, members in enumerate(groups) for i in members}
    file_plans, encoders, fallbacks = _file_plans(
        config, files, (absolute, formats), schemas, tokenizers, units, lambda i: output_of[i]
    )
    compared = {}
    for spec, encoder in encoders.items():
        compared[spec], file_plans = _parity(encoder, file_plans)
    infos = {
        spec: _info(encoder, fallbacks[spec], compared[spec]) for spec, encoder in encoders.items()
    }
    outputs = tuple(
        OutputPlan(
            path=dirs[members[0]],
            abs_path=str(resolve(dirs[members[0]], "output.dir")),
            tokenizer=file_plans[members[0]].tokenizer,
            info=infos[file_plans[members[0]].tokenizer],
            sizes=units[members[0]][0],
            samples_per_shard=shard_sizes[members[0]],
            file_indexes=tuple(members),
            span_width=_span_width(
                file_plans[members[0]].tokenizer, [file_plans[i] for i in members]
            ),
            align=1 if auto is None else auto.align,
            pack=pack,
        )
        for members in groups
    )
    return BuildPlan(files=file_plans, outputs=outputs, auto=auto), encoders


def validate_scan(config: UnitBuildConfig) -> tuple[BuildPlan, dict[TokenizerSpec, Encoder]]:
    """Check what a scan reads (source, tokenizer, build_batch if declared): a plan with no outputs.

    Units and output may be omitted; without ``units.build_batch`` the scan reads
    ``SCAN_BUILD_BATCH`` lines per batch (a speed setting that never changes a count).
    """
    missing = [name for name in config.missing() if name in _SCAN_NEEDS]
    files, schemas, tokenizers = _inputs(config, missing)
    count = len(files)
    declared = [SCAN_BUILD_BATCH] if config.build_batch is None else config.build_batch
    batches = build_batches(declared, count)
    absolute = source_validate.check_files_exist(files)
    formats = source_validate.file_formats(config.source_kind, files, absolute)
    file_plans, encoders, _ = _file_plans(
        config,
        files,
        (absolute, formats),
        schemas,
        tokenizers,
        [((), b) for b in batches],
        lambda i: None,
    )
    for encoder in encoders.values():
        # A fast engine must match the reference before a scan too.
        _, file_plans = _parity(encoder, file_plans)
    return BuildPlan(files=file_plans, outputs=()), encoders


def _inputs(
    config: UnitBuildConfig, missing: list[str]
) -> tuple[list[str], list, list[TokenizerSpec]]:
    """Nothing ``missing``; then the files, their fields and templates, and their tokenizers."""
    if missing:
        raise PipelineValidationError(missing=missing)
    files = source_validate.source_files(config.files)
    schemas = source_validate.source_schemas(files, config.fields, config.templates)
    return files, schemas, _tokenizer_specs(config, len(files))


def _file_plans(
    config: UnitBuildConfig,
    files: list[str],
    found: tuple[list[str], list[str]],
    schemas: list,
    tokenizers: list[TokenizerSpec],
    units: list[tuple[tuple[int, ...], int]],
    output_of: Callable[[int], int | None],
) -> tuple[tuple[FilePlan, ...], dict[TokenizerSpec, Encoder], dict[TokenizerSpec, str | None]]:
    """Load each tokenizer once (with its engine), plan each file (``found``: its absolute path
    and format), check what its source can check before reading and every template against its
    tokenizer; also each loaded tokenizer's engine fallback, if any."""
    absolute, formats = found
    line_limit = source_validate.max_line_bytes(config.max_line_bytes)
    loaded = {spec: tokenizer_validate.load_with_engine(spec) for spec in dict.fromkeys(tokenizers)}
    tokenizers = [loaded[spec][0] for spec in tokenizers]
    encoders = {spec: encoder for spec, encoder, _ in loaded.values()}
    file_plans = tuple(
        FilePlan(
            index=i,
            path=files[i],
            abs_path=absolute[i],
            fields=schemas[i][0],
            template=schemas[i][1],
            tokenizer=tokenizers[i],
            sizes=units[i][0],
            build_batch=units[i][1],
            max_line_bytes=line_limit,
            output_index=output_of(i),
            format=formats[i],
        )
        for i in range(len(files))
    )
    for plan in file_plans:
        open_source(plan).check()
    for (spec, template), indexes in _files_by_template(file_plans).items():
        tokenizer_validate.check_template_literals(encoders[spec], template, indexes)
    return file_plans, encoders, {spec: fallback for spec, _, fallback in loaded.values()}


def _files_by_template(
    files: tuple[FilePlan, ...],
) -> dict[tuple[TokenizerSpec, Template], list[int]]:
    """Each (tokenizer, template) pair once, with the files that use it, in file order."""
    groups: dict[tuple[TokenizerSpec, Template], list[int]] = {}
    for plan in files:
        groups.setdefault((plan.tokenizer, plan.template), []).append(plan.index)
    return groups


def _tokenizer_specs(config: UnitBuildConfig, count: int) -> list[TokenizerSpec]:
    declared = config.tokenizer
    # A single dict is shared by every file; a list maps by file index (the spec's rule).
    configs = list(declared) if isinstance(declared, list | tuple) else [declared]
    entries = per_file(list(enumerate(configs)), count, TokenizerMappingError)
    return [tokenizer_validate.tokenizer_spec(cfg, config.tokenizer_kind, i) for i, cfg in entries]


def _info(encoder: Encoder, fallback: str | None, parity_texts: int) -> TokenizerInfo:
    return TokenizerInfo(
        vocab_size=encoder.vocab_size,
        unk_id=encoder.unk_id,
        pad_id=encoder.pad_id,
        unk_source=encoder.unk_source,
        pad_source=encoder.pad_source,
        eos_id=encoder.eos_id,
        eos_source=encoder.eos_source,
        token_dtype=tokenizer_validate.check_vocab(encoder),
        file_sha256=encoder.file_sha256,
        engine=encoder.engine,
        engine_version=encoder.engine_version,
        reference_version=getattr(encoder, "reference", encoder).engine_version,
        engine_fallback=fallback,
        parity_texts=parity_texts,
    )


def _options_text(spec: TokenizerSpec) -> str:
    """The tokenizer options that change output, for the one-setting-per-directory check."""
    options = {
        "encode": spec.encode,
        "append_eos": spec.append_eos or None,
        "pad_fallback": spec.pad_fallback,
        "unk_fallback": spec.unk_fallback,
    }
    return "".join(f", {key}={value!r}" for key, value in options.items() if value is not None)


def _span_width(spec: TokenizerSpec, files: list[FilePlan]) -> int:
    if not spec.spans:
        return 0
    return max(len(f.template.segments()) for f in files) + int(spec.append_eos)


def _parity(encoder: Encoder, files: tuple[FilePlan, ...]) -> tuple[int, tuple[FilePlan, ...]]:
    """The parity guard at validation (tokenizer/parity.py): the parity corpus, then the records
    on the first ``parity.first_rows`` lines of the first file this fast encoder reads. Returns
    the number of texts compared, and the files with those rows' reference digests on the first
    file (``parity_first``)."""
    first = next((f for f in files if f.tokenizer == encoder.spec), None)
    if not isinstance(encoder, FastEncoder) or first is None:
        return 0, files
    where, texts = [], []
    for file, line, text in parity.corpus():
        where.append((file, line))
        texts.append(text)
    stages = ["parity_corpus"] * len(texts)
    lines, first_texts = _first_rows(first, encoder.spec.parity.first_rows)
    where += [(first.path, line) for line in lines]
    texts += first_texts
    stages += ["first_rows"] * len(first_texts)
    utf8 = [text.encode("utf-8") for text in texts]
    fast, reference = parity.encode_both(encoder, texts, utf8)
    error = parity.compare(encoder, fast, reference, where, stages, record_kind(first))
    if error is not None:
        raise error
    # Equal to the reference's ids: the build compares the first rows with these digests.
    digests = parity.row_digests(utf8, *fast)[len(texts) - len(first_texts) :]
    verdicts = tuple(zip(lines, digests, strict=True))
    return len(texts), tuple(replace(f, parity_first=verdicts) if f is first else f for f in files)


def _first_rows(plan: FilePlan, count: int) -> tuple[list[int], list[str]]:
    """The line numbers and texts of the records on a file's first ``count`` lines, up to its
    first bad record (the build itself reports that one, where it stands)."""
    lines: list[int] = []
    texts: list[str] = []
    if count == 0:
        return lines, texts
    source = open_source(plan)
    batches = source.batches()
    try:
        for raw in batches:
            parsed = source.parse(raw)
            keep = bisect.bisect_right(parsed.line_numbers, count)
            lines += parsed.line_numbers[:keep]
            texts += parsed.texts[:keep]
            if parsed.error is not None or raw.last_line >= count:
                break
    finally:
        batches.close()
    return lines, texts
