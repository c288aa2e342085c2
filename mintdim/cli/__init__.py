"""The ``mintdim`` command: tools for what a user does with a build (plan, verify, inspect,
group, split, decontaminate).

Each subcommand lives in its own module of this package and is added to :data:`main` below.
Builds themselves run through the Hydra runner (``python -m mintdim.run`` / ``mintdim-run``).
"""

from __future__ import annotations

import click

from mintdim._version import __version__
from mintdim.cli.bilingual import Group, click_text, language_option, option
from mintdim.shared.lang import Bilingual

__all__ = ["main"]

_TEXT = {
    "main": Bilingual(
        "MintDim tools for finished builds, unit planning and leakage-free splits.",
        "Công cụ MintDim cho các bản build đã xong, việc lập phương án unit và phân chia không "
        "rò rỉ.",
    ),
}


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # click's own version option fixes its line when the module is imported, in English.
    if value and not ctx.resilient_parsing:
        line = click_text("%(prog)s, version %(version)s").render()
        click.echo(line % {"prog": "mintdim", "version": __version__})
        ctx.exit()


@click.group(
    cls=Group, text=_TEXT["main"], context_settings={"help_option_names": ["-h", "--help"]}
)
@language_option
@option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    text=click_text("Show the version and exit."),
)
def main() -> None:
    """The language is applied before click parses the arguments (mintdim/cli/bilingual.py)."""


def _add_commands() -> None:
    # Imported here, after ``main`` exists, so each command module stays independent of the others.
    from mintdim.cli.decontaminate import decontaminate
    from mintdim.cli.group import group
    from mintdim.cli.inspect import inspect
    from mintdim.cli.plan import plan
    from mintdim.cli.split import split
    from mintdim.cli.verify import verify

    main.add_command(plan)
    main.add_command(verify)
    main.add_command(inspect)
    main.add_command(group)
    main.add_command(split)
    main.add_command(decontaminate)


_add_commands()
