"""``python -m hlodiff`` is the ``hlodiff`` command."""

from .cli import main

main()
