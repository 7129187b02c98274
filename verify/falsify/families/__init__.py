"""Search families of :func:`verify.falsify` (one module per family, one registry).

See :mod:`verify.falsify.families.registry` for the protocol a user family implements.
"""

from .registry import Spec, families_for, family_names, get_family, register_family

__all__ = ["Spec", "families_for", "family_names", "get_family", "register_family"]
