"""hlodiff where people already work: ``canon`` (git textconv), ``gitdiff`` (git's
external diff and difftool), ``baseline`` (a pre-merge gate), ``compile_log``
(framework compile logs) and ``recompiles`` (one run that compiled a program
more than once)."""
