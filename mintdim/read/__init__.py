"""Reading a finished build: ``open_build`` and ``UnitBuild`` (records, units, spans), and the training loader over one build or a mixture."""
