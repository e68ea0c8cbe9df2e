"""``python -m fabric.cli``: the same as the ``fabricctl`` console script."""

from fabric.cli.app import main

main()
