"""The verify report: a rich table for the terminal, ``report.md``, ``results.csv``, figures.

Layout: ``api.py`` (the output set and its files: :func:`write_report`, :func:`print_table`,
:func:`to_json`, :func:`exit_status`), ``summary.py`` (what a run found, in a few lines, and the
versions block), ``tables.py`` (the report's tables: bound checks, claims, informativeness) and
``terminal.py`` (those tables on the terminal, at most 100 columns wide).

Example
-------
>>> from verify.report import exit_status
>>> exit_status([])
0
"""

from .api import (
                  check_output_path,
                  exit_status,
                  print_table,
                  save_worst_instances,
                  summary_counts,
                  to_json,
                  write_report,
)

__all__ = ["write_report", "check_output_path", "print_table", "to_json", "summary_counts",
           "exit_status", "save_worst_instances"]
