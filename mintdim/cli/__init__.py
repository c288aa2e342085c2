"""The ``mintdim`` command: tools for what a user does with a build (plan, verify, inspect).

Each subcommand lives in its own module of this package and is added to :data:`main` below.
Builds themselves run through the Hydra runner (``python -m mintdim.run`` / ``mintdim-run``).
"""

from __future__ import annotations

import click

from mintdim.shared.lang import LANGUAGES, set_language

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--lang",
    type=click.Choice(LANGUAGES),
    envvar="MINTDIM_LANG",
    default=None,
    help="Language of every message: en or vi (default: $MINTDIM_LANG, else en).",
)
@click.version_option(package_name="mintdim", prog_name="mintdim")
def main(lang: str | None) -> None:
    """MintDim tools for finished builds and unit planning."""
    set_language(lang)


def _add_commands() -> None:
    # Imported here, after ``main`` exists, so each command module stays independent of the others.
    from mintdim.cli.inspect import inspect
    from mintdim.cli.plan import plan
    from mintdim.cli.verify import verify

    main.add_command(plan)
    main.add_command(verify)
    main.add_command(inspect)


_add_commands()
