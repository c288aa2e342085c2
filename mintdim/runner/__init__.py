"""The Hydra runner: composed YAML configs -> the fluent unit-build API, plus padding sweeps.

``mintdim.runner.translate`` is the only place that maps config to API calls; ``app`` holds the
command line (``python -m mintdim.run``), ``callbacks`` the sweep summary, ``schema`` the typed
config, ``demo`` the bundled demo files and ``confdir`` where ``conf/`` lives.
"""

from mintdim.runner.confdir import config_dir
from mintdim.runner.demo import demo_path, register_resolvers
from mintdim.runner.schema import MintDimConfig, register_configs
from mintdim.runner.translate import fluent_arguments, job_from_config

__all__ = [
    "MintDimConfig",
    "config_dir",
    "demo_path",
    "fluent_arguments",
    "job_from_config",
    "register_configs",
    "register_resolvers",
]
