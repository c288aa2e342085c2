"""Where the runner's Hydra config directory (``conf/``) lives, in a checkout and in a wheel."""

from __future__ import annotations

from pathlib import Path

__all__ = ["config_dir"]

_PACKAGE = Path(__file__).resolve().parent.parent


def config_dir() -> str:
    """The absolute path of the ``conf/`` directory the runner composes from.

    An installed wheel ships ``conf/`` inside the package (``mintdim/conf``); a source checkout
    or an editable install keeps it next to the package (``<repo>/conf``). Both are named here
    explicitly, nothing is searched for.

    Hydra's own relative ``config_path`` forms each fail in one of these layouts, hence an
    absolute path. Hydra resolves a relative path against the file ``mintdim/run.py`` under
    ``python -m mintdim.run``, but as ``pkg://mintdim/<path>`` under the ``mintdim-run`` console
    script, and a ``pkg://`` path needs an ``__init__.py`` in the config directory, which
    ``conf/`` does not have. So ``"../conf"`` fails for an editable install's console script and
    for a wheel (it looks in ``site-packages/conf``), and ``"conf"`` or ``"pkg://mintdim.conf"``
    fail from a checkout (verified with hydra-core 1.3.8 and omegaconf 2.3.1).
    """
    for candidate in (_PACKAGE / "conf", _PACKAGE.parent / "conf"):
        if (candidate / "config.yaml").is_file():
            return str(candidate)
    raise FileNotFoundError(
        f"MintDim's config directory was not found: looked for {_PACKAGE / 'conf'} (installed "
        f"package) and {_PACKAGE.parent / 'conf'} (source checkout)"
    )
