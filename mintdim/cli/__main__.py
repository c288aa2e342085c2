"""``python -m mintdim.cli``: the same command as the ``mintdim`` console script."""

from mintdim.cli import main

main()
