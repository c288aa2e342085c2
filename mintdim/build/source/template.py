"""Template grammar: ``{name}`` placeholders, ``{{``/``}}`` literal braces, every other brace an error.

Rendering is pure substitution (``Template.render``), never ``str.format``: a field value holding
``{x}`` is data, not a placeholder.
"""

from __future__ import annotations

from mintdim.build.contracts import Template
from mintdim.errors import TemplateSyntaxError

__all__ = ["parse_template"]


def parse_template(template: str, file_index: int) -> Template:
    """Parse a declared template, raising ``TemplateSyntaxError`` at the first misplaced brace."""
    literals: list[str] = []
    placeholders: list[str] = []
    literal: list[str] = []
    i, n = 0, len(template)
    while i < n:
        char = template[i]
        if char == "{" and template.startswith("{{", i):
            literal.append("{")
            i += 2
        elif char == "}" and template.startswith("}}", i):
            literal.append("}")
            i += 2
        elif char == "}":
            raise _syntax(template, file_index, i, "unmatched_close")
        elif char == "{":
            end = _placeholder_end(template, file_index, i)
            literals.append("".join(literal))
            literal = []
            placeholders.append(template[i + 1 : end])
            i = end + 1
        else:
            literal.append(char)
            i += 1
    literals.append("".join(literal))
    return Template(source=template, literals=tuple(literals), placeholders=tuple(placeholders))


def _placeholder_end(template: str, file_index: int, start: int) -> int:
    """Index of the ``}`` closing the placeholder opened at ``start``."""
    for j in range(start + 1, len(template)):
        if template[j] == "}":
            if j == start + 1:
                raise _syntax(template, file_index, start, "empty_placeholder")
            return j
        if template[j] == "{":
            raise _syntax(template, file_index, j, "nested_brace")
    raise _syntax(template, file_index, start, "unmatched_open")


def _syntax(template: str, file_index: int, position: int, problem: str) -> TemplateSyntaxError:
    return TemplateSyntaxError(
        file_index=file_index, template=template, position=position, problem=problem
    )
