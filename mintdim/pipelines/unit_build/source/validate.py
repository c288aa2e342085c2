"""Source checks: the shape of files/fields/templates, template grammar and field sets, file presence."""

from __future__ import annotations

from mintdim.pipelines.unit_build.contracts import Template
from mintdim.pipelines.unit_build.source.template import parse_template
from mintdim.shared.errors import (
    FieldMappingError,
    MintDimFileNotFoundError,
    SourceValidationError,
    TemplateFieldMismatchError,
    TemplateMappingError,
)
from mintdim.shared.paths import resolve

__all__ = ["check_files_exist", "source_files", "source_schemas"]


def source_files(files: object) -> list[str]:
    """The declared input paths, checked for shape."""
    paths = _string_list(files, "source.files")
    if not paths:
        raise SourceValidationError(key="source.files", problem="empty")
    return paths


def source_schemas(
    files: list[str], fields: object, templates: object
) -> list[tuple[tuple[str, ...], Template]]:
    """Per file: its declared fields and parsed template, with every mapping rule checked."""
    field_lists = _mapped(fields, "source.fields", len(files), FieldMappingError)
    for i, names in enumerate(field_lists):
        checked = _string_list(names, f"source.fields[{i}]")
        if not checked:
            raise SourceValidationError(key=f"source.fields[{i}]", problem="empty")
        duplicated = [name for name in dict.fromkeys(checked) if checked.count(name) > 1]
        if duplicated:
            raise SourceValidationError(
                key=f"source.fields[{i}]", problem="duplicate_field", got=duplicated[0]
            )
    template_list = _mapped(templates, "source.templates", len(files), TemplateMappingError)
    for i, template in enumerate(template_list):
        if not isinstance(template, str):
            raise SourceValidationError(
                key=f"source.templates[{i}]", problem="not_string", got=type(template).__name__
            )
    schemas = []
    for index, path in enumerate(files):
        names = tuple(field_lists[index if len(field_lists) > 1 else 0])
        source = template_list[index if len(template_list) > 1 else 0]
        template = parse_template(source, index)
        _check_field_sets(path, names, template)
        schemas.append((names, template))
    return schemas


def check_files_exist(files: list[str]) -> list[str]:
    """Absolute paths of the input files, or ``MintDimFileNotFoundError`` for the first absent one."""
    resolved = []
    for path in files:
        absolute = resolve(path)
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


def _mapped(value: object, key: str, file_count: int, arity_error: type) -> list:
    if not isinstance(value, list | tuple):
        raise SourceValidationError(key=key, problem="not_list", got=type(value).__name__)
    if len(value) not in (1, file_count):
        raise arity_error(file_count=file_count, got=len(value))
    return list(value)


def _string_list(value: object, key: str) -> list[str]:
    if not isinstance(value, list | tuple):
        raise SourceValidationError(key=key, problem="not_list", got=type(value).__name__)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise SourceValidationError(
                key=f"{key}[{i}]", problem="not_string", got=type(item).__name__
            )
    return list(value)
