"""``python -m hlodiff`` is the ``hlodiff`` command."""

from .command import main

main()
