"""Dispatch ``python -m benchmarks NAME [args]`` to ``benchmarks/NAME.py:main(argv)``."""

from __future__ import annotations

import importlib
import pkgutil
import sys


def available() -> list[str]:
    """Names of the benchmark modules.

    >>> isinstance(available(), list)
    True
    """
    import benchmarks

    return sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                  if not m.name.startswith("_"))


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = available()
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m benchmarks NAME [args]   (NAME: all, " + ", ".join(names) + ")")
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name == "all":
        return max(importlib.import_module(f"benchmarks.{n}").main(rest) or 0 for n in names)
    if name not in names:
        print(f"error: unknown benchmark {name!r}; valid: {', '.join(names)}", file=sys.stderr)
        return 2
    return int(importlib.import_module(f"benchmarks.{name}").main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
