"""Where the runner's Hydra config directory (``conf/``) lives, in a checkout and in a wheel."""

from __future__ import annotations

from pathlib import Path

__all__ = ["config_dir"]

_PACKAGE = Path(__file__).resolve().parent.parent


def config_dir() -> str:
    """The absolute path of the ``conf/`` directory the runner composes from.

    An installed wheel ships ``conf/`` inside the package (``mintdim/conf``); a source checkout
    or an editable install keeps it next to the package (``<repo>/conf``). Both are named here
    explicitly, nothing is searched for. Hydra's own relative ``config_path`` forms each fail in
    one of these layouts (see ../shared/notes/hydra-facts.md, section 1), hence an absolute path.
    """
    for candidate in (_PACKAGE / "conf", _PACKAGE.parent / "conf"):
        if (candidate / "config.yaml").is_file():
            return str(candidate)
    raise FileNotFoundError(
        f"MintDim's config directory was not found: looked for {_PACKAGE / 'conf'} (installed "
        f"package) and {_PACKAGE.parent / 'conf'} (source checkout)"
    )
