"""verify — the verdict: theory vs measured runs, tightness against exact worst cases, the CLI.

Example
-------
>>> import verify
>>> verify.__name__
'verify'
"""

# ``verify.check`` is both a submodule and the function users call; importing the function
# here (after the submodule has loaded) makes the attribute the function for good. The module
# imports toys and pandas only when a check runs.
from .check import check, check_log

# ``verify.falsify`` likewise: the subpackage ``verify/falsify/`` (its modules stay importable
# as ``verify.falsify.<module>``) and the function (toys, scipy and PEPit load on first use)
from .falsify import falsify  # noqa: E402

# ``verify.reproduce`` likewise (the subpackage's modules stay importable as
# ``verify.reproduce.<module>``; toys and matplotlib load on first use)
from .reproduce import reproduce  # noqa: E402
from .sweep import sweep  # the same: verify.sweep is the function

__all__ = ["worst_instance", "check", "check_log", "falsify", "reproduce", "sweep"]


def __getattr__(name):
    if name == "worst_instance":  # lazy: scipy and toys load on first use
        from .worst import worst_instance

        return worst_instance
    raise AttributeError(f"module 'verify' has no attribute {name!r}")
