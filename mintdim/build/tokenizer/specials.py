"""PAD, UNK and EOS ids: the library's own first, then the declared fallback, never a raw id.

Each library module says where it looked (``sp.pad_id()``, ``padding.pad_id`` ...) and how a token
string maps to an id; this module applies the one rule both share. A fallback is used only when
the library exposes no id of its own, and the source string recorded in the manifest says which
happened.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mintdim.build.contracts import TokenizerSpec
from mintdim.errors import TokenizerSpecialTokenError

__all__ = ["Found", "SpecialIds", "resolve_specials"]

Found = tuple[int, str] | None
"""An id the library exposes and where it came from, or None when it has none."""


@dataclass(frozen=True, slots=True)
class SpecialIds:
    """The resolved special ids of one loaded tokenizer and where each came from."""

    unk_id: int | None
    unk_source: str
    pad_id: int
    pad_source: str
    eos_id: int | None
    eos_source: str | None


def resolve_specials(
    spec: TokenizerSpec,
    *,
    unk: Found,
    pad: Found,
    eos: Found,
    looked_for: dict[str, list[str]],
    token_id: Callable[[str], int | None],
) -> SpecialIds:
    """Apply the spec's fallbacks to what the library exposes; raise when nothing is left."""

    def missing(name: str, **facts: str) -> TokenizerSpecialTokenError:
        return TokenizerSpecialTokenError(
            token=name, path=spec.path, looked_for=looked_for[name], **facts
        )

    def fallback(name: str, option: str, value: str, choices: dict[str, Found]) -> tuple[int, str]:
        if value in choices:
            chosen = choices[value]
            if chosen is None:
                raise missing(name, option=option, fallback=value)
            return chosen[0], f"{option} {value!r}: {chosen[1]}"
        found = token_id(value)
        if found is None:
            raise missing(name, option=option, fallback=value)
        return found, f"{option} token {value!r}"

    if unk is None and spec.unk_fallback == "none":
        unk_id, unk_source = None, "none: unk_fallback 'none' turned the UNK tier off"
    elif unk is None:
        if spec.unk_fallback is None:
            raise missing("unk_id")
        unk_id, unk_source = fallback("unk_id", "unk_fallback", spec.unk_fallback, {"eos": eos})
    else:
        unk_id, unk_source = unk[0], _library_wins(unk[1], "unk_fallback", spec.unk_fallback)
    if pad is None:
        if spec.pad_fallback is None:
            raise missing("pad_id")
        unk_found = None if unk_id is None else (unk_id, unk_source)
        pad_id, pad_source = fallback(
            "pad_id", "pad_fallback", spec.pad_fallback, {"eos": eos, "unk": unk_found}
        )
    else:
        pad_id, pad_source = pad[0], _library_wins(pad[1], "pad_fallback", spec.pad_fallback)
    if spec.append_eos and eos is None:
        raise missing("eos_id", option="append_eos")
    eos_id, eos_source = eos if spec.append_eos and eos is not None else (None, None)
    return SpecialIds(unk_id, unk_source, pad_id, pad_source, eos_id, eos_source)


def _library_wins(source: str, option: str, value: str | None) -> str:
    return (
        source if value is None else f"{source} (the library's own id; {option} {value!r} unused)"
    )
