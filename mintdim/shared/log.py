"""How MintDim shows a person the lines that are not errors: log lines and warnings.

Log lines (one per closed shard, the ``built ...`` summary, sweep notices) go through the
standard ``logging`` module under the ``mintdim`` logger and its children, so an application or
Hydra's ``job_logging`` can format, redirect or silence them like any library's lines
(``logging.getLogger("mintdim").setLevel(logging.WARNING)`` keeps only warnings).

A person who configured no logging at all (no handler anywhere from the emitting logger up to
the root, no level set on a ``mintdim`` logger, nothing disabled) still sees INFO lines and up
on stderr, bare, as a command-line tool prints them. That check runs at every line, so a
configuration made later (Hydra configures logging when each job starts) takes over at once and
no line is ever shown twice. Bare lines pass through ``tqdm.write``, so a progress bar on the
same terminal is redrawn below them instead of being torn.

MintDim's warnings (subclasses of :class:`MintDimWarning`) stay ``warnings.warn`` warnings, so
``-W error`` and ``warnings.simplefilter`` work on them, but are shown as their text alone: no
``file:line: Category:`` prefix and no Python source line.
"""

from __future__ import annotations

import logging
import sys
import warnings

from tqdm import tqdm

from mintdim.shared.lang import Bilingual

__all__ = ["LOGGER_NAME", "MintDimWarning", "get_logger", "show"]

LOGGER_NAME = "mintdim"
"""The logger every MintDim line goes through (children: ``mintdim.<part>``)."""


class MintDimWarning(UserWarning):
    """Base of MintDim's warnings: shown as their text alone, without Python's source line."""


def get_logger(part: str) -> logging.Logger:
    """The logger of one part of MintDim, ``mintdim.<part>``."""
    return logging.getLogger(f"{LOGGER_NAME}.{part}")


def show(
    logger: logging.Logger, text: Bilingual, level: int = logging.INFO, **fields: object
) -> None:
    """Log ``text`` in the current language; printed to stderr if nobody configured logging."""
    line = text.render(**fields)
    if _configured(logger):
        logger.log(level, line)
    elif level >= logging.INFO and logging.root.manager.disable < level:
        tqdm.write(line, file=sys.stderr)
        sys.stderr.flush()


def _configured(logger: logging.Logger) -> bool:
    """Whether the application (or Hydra, or pytest) has a say about ``logger``'s lines."""
    node: logging.Logger | None = logger
    while node is not None:
        if node.handlers or node.disabled or not node.propagate:
            return True
        if node is not logging.root and node.level != logging.NOTSET:
            return True
        node = node.parent
    return False


_plain_formatwarning = warnings.formatwarning


def _formatwarning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    if issubclass(category, MintDimWarning):
        return f"{message}\n"
    return _plain_formatwarning(message, category, filename, lineno, line)


# Python's default display and logging.captureWarnings both format through this hook.
warnings.formatwarning = _formatwarning
