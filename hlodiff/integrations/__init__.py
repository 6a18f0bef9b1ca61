"""hlodiff where people already work: ``canon`` (git textconv), ``gitdiff`` (git's
external diff and difftool), ``baseline`` (a pre-merge gate) and ``compile_log``
(framework compile logs)."""
