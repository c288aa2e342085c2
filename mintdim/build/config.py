"""The user's declarations as the fluent API collected them: unchecked, exactly as given.

``validate.py`` turns a ``UnitBuildConfig`` into a ``contracts.BuildPlan`` or a named error.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from mintdim.shared.types import TokenizerKind

__all__ = ["UnitBuildConfig"]


@dataclass(frozen=True, slots=True)
class UnitBuildConfig:
    """Each field is None until its step is declared."""

    source_kind: str | None = None
    """Which ``.source`` method was called: ``jsonl`` (plain or compressed) or ``parquet``."""
    files: object = None
    """``source.jsonl(files=...)`` / ``source.parquet(files=...)``: list of input paths."""
    fields: object = None
    """``source.<kind>(fields=...)``: list of lists of keys (columns), one shared or one per file."""
    templates: object = None
    """``source.<kind>(templates=...)``: list of template strings, one shared or one per file."""
    max_line_bytes: object = None
    """``source.<kind>(max_line_bytes=...)``: the longest JSONL line read, the most bytes a
    Parquet row's declared values hold; None means the default."""
    tokenizer_kind: TokenizerKind | None = None
    """Which ``.tokenizer`` method was called."""
    tokenizer: object = None
    """Its argument: one ``{"path": ...}`` dict (shared) or a list of them."""
    sizes: object = None
    """``units(sizes=...)``: list of ascending size lists (one shared or one per file), or "auto"."""
    unit_plan: object = None
    """``units(count=, align=, max_size=, cost=, unit_cost=)``: the planner's options given for
    ``sizes="auto"``, as a dict of the ones given (None when none was)."""
    pack: object = None
    """``units(pack=...)``: True packs several whole samples into each row of a unit."""
    build_batch: object = None
    """``units(build_batch=...)``: list of positive ints, one shared or one per file."""
    output_dir: object = None
    """``output.dir(path)``: a path, or a list of paths (one shared or one per file)."""
    samples_per_shard: object = None
    """``output.dir(samples_per_shard=...)``: list of positive ints, one shared or one per file."""

    def missing(self) -> list[str]:
        """The spec's names of every declaration still absent, in pipeline order."""
        names = {
            "files": "source.files",
            "fields": "source.fields",
            "templates": "source.templates",
            "tokenizer": "tokenizer",
            "sizes": "units.sizes",
            "build_batch": "units.build_batch",
            "output_dir": "output.dir",
            "samples_per_shard": "output.samples_per_shard",
        }
        return [
            names[f.name] for f in fields(self) if f.name in names and getattr(self, f.name) is None
        ]
