"""``python -m mintdim.run``: build token shards from a Hydra-composed config (see docs/runner.md).

The same app is installed as the ``mintdim-run`` console script, which shell completion needs.
"""

from mintdim.runner.app import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
