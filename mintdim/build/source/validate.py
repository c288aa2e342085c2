"""Source checks: the shape of files/fields/templates, template grammar and field sets, file
presence, and the format each file is stored in."""

from __future__ import annotations

from mintdim.build.contracts import Template
from mintdim.build.rules import is_positive_int, per_file
from mintdim.build.source import compressed, parquet
from mintdim.build.source.template import parse_template
from mintdim.errors import (
    FieldMappingError,
    MintDimFileNotFoundError,
    SourceFormatError,
    SourceValidationError,
    TemplateFieldMismatchError,
    TemplateMappingError,
)
from mintdim.paths import resolve

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "check_files_exist",
    "file_formats",
    "max_line_bytes",
    "source_files",
    "source_schemas",
]


def source_files(files: object) -> list[str]:
    """The declared input paths, checked for shape."""
    paths = _string_list(files, "source.files")
    if not paths:
        raise SourceValidationError(key="source.files", problem="empty")
    return paths


DEFAULT_MAX_LINE_BYTES = 64 << 20
"""64 MiB: hundreds of times any real sample, and still a bound on what one line can cost."""


def max_line_bytes(value: object) -> int:
    """The declared line limit, or the default when none was declared."""
    if value is None:
        return DEFAULT_MAX_LINE_BYTES
    if not is_positive_int(value):
        raise SourceValidationError(key="source.max_line_bytes", problem="not_positive", got=value)
    return int(value)


def source_schemas(
    files: list[str], fields: object, templates: object
) -> list[tuple[tuple[str, ...], Template]]:
    """Per file: its declared fields and parsed template, with every mapping rule checked."""
    count = len(files)
    declared_fields = _listed(fields, "source.fields")
    field_lists = per_file(declared_fields, count, FieldMappingError)
    for i, names in enumerate(declared_fields):
        checked = _string_list(names, f"source.fields[{i}]")
        if not checked:
            raise SourceValidationError(key=f"source.fields[{i}]", problem="empty")
        duplicated = [name for name in dict.fromkeys(checked) if checked.count(name) > 1]
        if duplicated:
            raise SourceValidationError(
                key=f"source.fields[{i}]", problem="duplicate_field", got=duplicated[0]
            )
    declared_templates = _listed(templates, "source.templates")
    template_list = per_file(declared_templates, count, TemplateMappingError)
    for i, template in enumerate(declared_templates):
        if not isinstance(template, str):
            raise SourceValidationError(
                key=f"source.templates[{i}]", problem="not_string", got=type(template).__name__
            )
    schemas = []
    for index, path in enumerate(files):
        names = tuple(field_lists[index])
        template = parse_template(template_list[index], index)
        _check_field_sets(path, names, template)
        schemas.append((names, template))
    return schemas


def check_files_exist(files: list[str]) -> list[str]:
    """Absolute paths of the input files, or ``MintDimFileNotFoundError`` for the first absent one."""
    resolved = []
    for index, path in enumerate(files):
        absolute = resolve(path, f"source.files[{index}]")
        if not absolute.is_file():
            raise MintDimFileNotFoundError(context="source", path=path)
        resolved.append(str(absolute))
    return resolved


def _check_field_sets(path: str, names: tuple[str, ...], template: Template) -> None:
    used = dict.fromkeys(template.placeholders)
    mismatches = (
        ("not_declared", [name for name in used if name not in names]),
        ("not_used", [name for name in names if name not in used]),
    )
    for problem, found in mismatches:
        if found:
            raise TemplateFieldMismatchError(
                file=path,
                fields=list(names),
                template=template.source,
                field=found[0],
                problem=problem,
            )


def _listed(value: object, key: str) -> list:
    if not isinstance(value, list | tuple):
        raise SourceValidationError(key=key, problem="not_list", got=type(value).__name__)
    return list(value)


def _string_list(value: object, key: str) -> list[str]:
    items = _listed(value, key)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise SourceValidationError(
                key=f"{key}[{i}]", problem="not_string", got=type(item).__name__
            )
    return items


_CODES = {
    "jsonl": "plain",
    **{name: codec.code for name, codec in compressed.CODECS.items()},
    "parquet": "parquet",
}
"""Each format by the code ``SourceFormatError`` names it with."""
_MAGIC_BYTES = 8


def file_formats(kind: str | None, files: list[str], absolute: list[str]) -> list[str]:
    """The format of each input (``FilePlan.format``), found from its first bytes.

    ``kind``: the source step (``jsonl``, the default, or ``parquet``). A name whose extension
    claims a compression or Parquet, or a step whose kind the bytes are not in, is
    ``SourceFormatError``; a name that claims nothing is read as whatever its bytes are.
    """
    return [
        _file_format(kind or "jsonl", path, full)
        for path, full in zip(files, absolute, strict=True)
    ]


def _file_format(kind: str, path: str, absolute: str) -> str:
    with open(absolute, "rb") as handle:
        head = handle.read(_MAGIC_BYTES)
    found = _found(head)
    if kind == "parquet" and found != "parquet":
        raise SourceFormatError(file=path, claimed="parquet", found=_CODES[found], by="step")
    if kind == "jsonl" and found == "parquet":
        raise SourceFormatError(file=path, claimed="plain", found="parquet", by="step")
    claimed = _claimed(path)
    if claimed is not None and claimed != found:
        raise SourceFormatError(
            file=path, claimed=_CODES[claimed], found=_CODES[found], by="extension"
        )
    return found


def _found(head: bytes) -> str:
    """The format the first bytes of a file show: a compression's or Parquet's magic, else
    plain JSONL."""
    if head.startswith(parquet.MAGIC):
        return "parquet"
    for name, codec in compressed.CODECS.items():
        if head.startswith(codec.magic):
            return name
    return "jsonl"


def _claimed(path: str) -> str | None:
    """The format a file's name claims by its extension, if any."""
    name = path.lower()
    if name.endswith(parquet.EXTENSIONS):
        return "parquet"
    for format_name, codec in compressed.CODECS.items():
        if name.endswith(codec.extensions):
            return format_name
    return None
