"""The progress bar of the commands that work through a list of items (``reproduce``,
``tightness --vary``): ``what [bar] k/N elapsed, left ETA (done LAST)`` on stderr, transient.

The time left is the mean time per finished item times the items left (rich's own estimate
averages over the last 30 s only, which shows nothing for items that take minutes).

Example
-------
>>> import io
>>> from rich.console import Console
>>> screen = Console(file=io.StringIO(), force_terminal=True, width=100)
>>> with counter(2, "items", True, console=screen) as step:
...     step("a"); step("b")
>>> "2/2" in screen.file.getvalue()
True
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["counter", "eta_seconds"]


@contextlib.contextmanager
def counter(total: int, what: str, show: bool, *, console=None, redirect_stdout: bool = False):
    """``step(label)`` after each of ``total`` items, drawn as a rich progress bar on stderr
    (or ``console``) when ``show``; nothing otherwise. ``redirect_stdout``: lines printed
    meanwhile stay above the bar (only when stdout is the same terminal)."""
    if not show:
        yield lambda label: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("left"), _mean_time_left(),
                   TextColumn("{task.fields[last]}"),
                   console=console or Console(file=sys.stderr), transient=True,
                   redirect_stdout=redirect_stdout, redirect_stderr=False)
    with bar:
        task = bar.add_task(what, total=total, last="")
        yield lambda label: bar.update(task, advance=1, last=f"(done {label})")


def _mean_time_left():
    from rich.progress import ProgressColumn
    from rich.text import Text

    class MeanTimeLeft(ProgressColumn):
        """Time left = elapsed / finished x left, ``-:--:--`` before the first item."""

        def render(self, task):
            left = eta_seconds(task.elapsed, task.completed, task.total)
            if left is None:
                return Text("-:--:--", style="progress.remaining")
            m, s = divmod(int(round(left)), 60)
            h, m = divmod(m, 60)
            return Text(f"{h}:{m:02d}:{s:02d}", style="progress.remaining")

    return MeanTimeLeft()


def eta_seconds(elapsed, done, total):
    """Seconds left at the mean pace so far; None before the first item.

    >>> eta_seconds(30.0, 2, 5), eta_seconds(3.0, 0, 5), eta_seconds(None, 1, 5)
    (45.0, None, None)
    """
    if not elapsed or not done or total is None:
        return None
    return float(elapsed) / done * max(total - done, 0)
