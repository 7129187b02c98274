"""verify — the verdict: theory vs measured runs, tightness against exact worst cases, the CLI.

Example
-------
>>> import verify
>>> verify.__name__
'verify'
"""

# ``verify.reproduce`` is both a subpackage and the function users call (as ``toys.constants``):
# importing the function here makes the attribute the function; the subpackage's modules stay
# importable as ``verify.reproduce.<module>``. Light: toys and matplotlib load on first use.
from .reproduce import reproduce  # noqa: E402, F401
