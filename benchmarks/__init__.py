"""Benchmarks (not timed tests): ``python -m benchmarks NAME [args]``.

Each ``benchmarks/<name>.py`` exposes ``main(argv) -> int`` and prints its figures.

Example
-------
>>> from benchmarks.__main__ import available
>>> "bounds" in available()
True
"""
