"""The bundled demo files and the ``${mintdim_demo:<name>}`` config resolver that names them."""

from __future__ import annotations

import os
from pathlib import Path

from omegaconf import OmegaConf

from mintdim import DemoFileError

__all__ = ["DEMO_DIR", "RESOLVER", "demo_files", "demo_path", "register_resolvers"]

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
"""``mintdim/demo/``: demo data, demo tokenizers and their licences, shipped in the wheel."""

RESOLVER = "mintdim_demo"
"""Name of the resolver: ``${mintdim_demo:self_instruct_seed_alpaca.jsonl}`` in a config."""

_SUFFIXES = (".jsonl", ".parquet", ".model", ".json")


def demo_files() -> list[str]:
    """The names a config may pass to the resolver (data and tokenizer files), sorted."""
    return sorted(p.name for p in DEMO_DIR.iterdir() if p.is_file() and p.suffix in _SUFFIXES)


def demo_path(name: str) -> str:
    """The path of the bundled file ``name``, as a string MintDim then records verbatim.

    The file is named, never searched for: ``name`` must be one of :func:`demo_files`.
    The path is written relative to the current directory when the file lies below it
    (a source checkout run from the repository root gives ``mintdim/demo/<name>``), and
    absolute otherwise (an installed wheel gives ``.../site-packages/mintdim/demo/<name>``).
    Relative paths resolve from the current directory, exactly like the user's own paths,
    and they keep the manifests and indexes of ``outputs_examples/`` free of machine-specific
    absolute paths.
    """
    if name not in demo_files():
        raise DemoFileError(name=name, available=demo_files())
    path = DEMO_DIR / name
    cwd = Path(os.getcwd()).resolve()
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def register_resolvers() -> None:
    """Register ``${mintdim_demo:...}`` with OmegaConf (idempotent)."""
    if not OmegaConf.has_resolver(RESOLVER):
        OmegaConf.register_new_resolver(RESOLVER, demo_path)
