"""Whole-job validation: declarations in, a frozen ``BuildPlan`` (and loaded tokenizers) out.

Order: completeness, then the shape and mapping of every block without touching the filesystem,
then files and directories, then tokenizer loading and the template/tokenizer contract. Every
check runs before the first byte is written; the first failing rule raises its named error.
"""

from __future__ import annotations

from pathlib import Path

from mintdim.pipelines.unit_build.config import UnitBuildConfig
from mintdim.pipelines.unit_build.contracts import (
    BuildPlan,
    FilePlan,
    OutputPlan,
    Template,
    TokenizerInfo,
    TokenizerSpec,
)
from mintdim.pipelines.unit_build.output import durable
from mintdim.pipelines.unit_build.output import validate as output_validate
from mintdim.pipelines.unit_build.rules import per_file
from mintdim.pipelines.unit_build.source import validate as source_validate
from mintdim.pipelines.unit_build.tokenizer import Encoder, load_encoder
from mintdim.pipelines.unit_build.tokenizer import validate as tokenizer_validate
from mintdim.pipelines.unit_build.units.validate import unit_settings
from mintdim.shared.errors import PipelineValidationError, TokenizerMappingError
from mintdim.shared.paths import resolve, same_place_key

__all__ = ["validate"]


def validate(
    config: UnitBuildConfig, resume: bool = False
) -> tuple[BuildPlan, dict[TokenizerSpec, Encoder]]:
    """Check every declaration; return the plan and the tokenizers it loaded.

    ``resume``: an output directory may hold an unfinished build to continue.
    """
    missing = config.missing()
    if missing:
        raise PipelineValidationError(missing=missing)
    files = source_validate.source_files(config.files)
    count = len(files)
    schemas = source_validate.source_schemas(files, config.fields, config.templates)
    tokenizers = _tokenizer_specs(config, count)
    units = unit_settings(config.sizes, config.build_batch, count)
    dirs = output_validate.output_dirs(config.output_dir, count)
    shard_sizes = output_validate.samples_per_shard(config.samples_per_shard, count)
    settings = [
        {
            # Two spellings of one tokenizer file are one tokenizer.
            "tokenizer": f"{tokenizers[i].kind}: {same_place_key(tokenizers[i].abs_path)}",
            "units.sizes": str(list(units[i][0])),
            "output.samples_per_shard": str(shard_sizes[i]),
        }
        for i in range(count)
    ]
    groups = output_validate.group_outputs(dirs, settings, files)
    absolute = source_validate.check_files_exist(files)
    output_validate.check_directories_usable([dirs[members[0]] for members in groups], resume)

    encoders = {spec: load_encoder(spec) for spec in dict.fromkeys(tokenizers)}
    infos = {spec: _info(encoder) for spec, encoder in encoders.items()}
    output_of = {i: g for g, members in enumerate(groups) for i in members}
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
            output_index=output_of[i],
        )
        for i in range(count)
    )
    for (spec, template), indexes in _files_by_template(file_plans).items():
        tokenizer_validate.check_template_literals(encoders[spec], template, indexes)
    outputs = tuple(
        OutputPlan(
            path=dirs[members[0]],
            abs_path=str(resolve(dirs[members[0]])),
            tokenizer=tokenizers[members[0]],
            info=infos[tokenizers[members[0]]],
            sizes=units[members[0]][0],
            samples_per_shard=shard_sizes[members[0]],
            file_indexes=tuple(members),
        )
        for members in groups
    )
    return BuildPlan(files=file_plans, outputs=outputs), encoders


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


def _info(encoder: Encoder) -> TokenizerInfo:
    return TokenizerInfo(
        vocab_size=encoder.vocab_size,
        unk_id=encoder.unk_id,
        pad_id=encoder.pad_id,
        unk_source=encoder.unk_source,
        pad_source=encoder.pad_source,
        token_dtype=tokenizer_validate.check_vocab(encoder),
        file_sha256=durable.file_sha256(Path(encoder.spec.abs_path)),
    )
