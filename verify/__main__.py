"""``python -m verify`` is the same as the ``boundlab`` command."""

from verify.cli import console

console()
