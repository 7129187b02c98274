"""Progress of the commands that work through a list of items (``verify``'s checks, ``sweep``'s
grid points, ``reproduce``'s items, ``tightness --vary``'s brackets), on stderr, in one of three
modes (:func:`mode`):

- ``"bar"`` (stderr is a terminal): a transient rich bar, ``what [bar] k/N elapsed, left ETA
  (done LAST)``;
- ``"lines"`` (stderr is not a terminal: a CI log, a notebook, a file): plain lines such as
  ``reproduce: 2/4, 0:00:12 elapsed, 0:00:12 left (done 004:fig3)``, at most one every
  :data:`LINE_EVERY` seconds (the first and the last item always); with a ``heartbeat``
  (``reproduce``: :data:`HEARTBEAT`), also a line such as ``reproduce: 2/4, 0:10:12
  elapsed, still on 001:fig1 (0:10:00)`` whenever an item has run that long without a line,
  so that a log shows a long item is alive;
- ``"off"`` (``--quiet``): nothing.

stdout is never written, so ``--json`` output stays one strict JSON document whatever the mode.
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
>>> log = io.StringIO()
>>> with counter(2, "items", "lines", stream=log) as step:
...     step("a"); step("b")
>>> log.getvalue().splitlines()[-1].startswith("items: 2/2, ")
True
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

__all__ = ["counter", "eta_seconds", "mode", "pep_spinner", "Ticker", "LINE_EVERY", "MODES",
           "HEARTBEAT"]

#: the progress modes: a rich bar, plain lines, nothing
MODES = ("bar", "lines", "off")
#: seconds between two progress lines (the first and the last item are always written)
LINE_EVERY = 2.0
#: seconds without a line after which ``reproduce`` says which item it is still on (lines mode)
HEARTBEAT = 60.0


def mode(quiet: bool = False, stream=None) -> str:
    """``"off"`` with ``--quiet``, else ``"bar"`` on a terminal and ``"lines"`` elsewhere.

    >>> import io
    >>> mode(True), mode(False, io.StringIO())
    ('off', 'lines')
    """
    if quiet:
        return "off"
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return "bar" if callable(isatty) and isatty() else "lines"


def _as_mode(show) -> str:
    """A mode from ``show``: a mode name, or a bool (True: the bar, as before modes)."""
    if isinstance(show, str):
        if show not in MODES:
            raise ValueError(f"progress mode {show!r}: one of {', '.join(MODES)}")
        return show
    return "bar" if show else "off"


class Ticker:
    """``done`` of ``total`` items of ``what``, drawn in ``show``'s mode (a mode name or a
    bool); starts at :meth:`start` or at the first :meth:`update` (so an input error raised
    before any item stays one line), ends at :meth:`stop`."""

    def __init__(self, total, what: str, show, *, console=None, stream=None,
                 redirect_stdout: bool = False, every: float = LINE_EVERY):
        self.total, self.what, self.mode = total, what, _as_mode(show)
        self.console, self.redirect_stdout, self.every = console, redirect_stdout, every
        self.stream = stream
        self.done, self._bar, self._task, self._t0, self._last = 0, None, None, None, None
        self._beat_stop, self._lock, self._done_at = None, threading.Lock(), None

    def start(self) -> None:
        if self._t0 is not None:
            return
        self._t0 = time.monotonic()
        if self.mode == "bar":
            self._bar = _rich_bar(self.console, self.redirect_stdout)
            self._bar.start()
            self._task = self._bar.add_task(self.what, total=self.total, last="")

    def update(self, done=None, label: str = "", total=None) -> None:
        """``done`` items finished (None: one more), the last being ``label``."""
        self.start()
        before = self.done
        self.done = self.done + 1 if done is None else int(done)
        self.total = self.total if total is None else total
        if self.mode == "bar":
            self._bar.update(self._task, completed=self.done, total=self.total,
                             last=f"(done {label})" if label else "")
        elif self.mode == "lines" and self.done > before:
            self._line(label)

    def heartbeat(self, every: float, labels=None) -> None:
        """In lines mode, a line every ``every`` seconds without one, naming the item being
        worked on (``labels[done]`` when given; a daemon thread, ended by :meth:`stop`)."""
        if self.mode != "lines" or self._beat_stop is not None:
            return
        self.start()
        stop = self._beat_stop = threading.Event()

        def run():
            while not stop.wait(every / 4):
                with self._lock:
                    now = time.monotonic()
                    if now - (self._last or self._t0) < every:
                        continue
                    self._last = now
                    on = labels[self.done] if labels and self.done < len(labels) else \
                        f"item {self.done + 1}"
                    self._write(f"{self.what}: {self.done}/{self.total}, "
                                f"{_clock(now - self._t0)} elapsed, still on {on} "
                                f"({_clock(now - self._item_t0())})")

        threading.Thread(target=run, daemon=True).start()

    def _item_t0(self) -> float:
        return self._done_at or self._t0

    def _write(self, text: str) -> None:
        stream = sys.stderr if self.stream is None else self.stream
        print(text, file=stream, flush=True)

    def _line(self, label: str) -> None:
        with self._lock:
            self._done_at = time.monotonic()
            self._line_locked(label)

    def _line_locked(self, label: str) -> None:
        now = time.monotonic()
        last = self.total is not None and self.done >= self.total
        if not (last or self._last is None or now - self._last >= self.every):
            return
        self._last = now
        elapsed = now - self._t0
        left = eta_seconds(elapsed, self.done, self.total)
        text = f"{self.what}: {self.done}/{'?' if self.total is None else self.total}, " \
               f"{_clock(elapsed)} elapsed, {'-:--:--' if left is None else _clock(left)} left"
        self._write(text + (f" (done {label})" if label else ""))

    def stop(self) -> None:
        if self._beat_stop is not None:
            self._beat_stop.set()
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


@contextlib.contextmanager
def counter(total: int, what: str, show, *, console=None, redirect_stdout: bool = False,
            stream=None, heartbeat=None, labels=None):
    """``step(label)`` after each of ``total`` items, drawn in ``show``'s mode (:func:`mode`;
    True: the bar, False: nothing) on stderr (the bar on ``console``, the lines on ``stream``
    when given). ``redirect_stdout``: lines printed meanwhile stay above the bar (only when
    stdout is the same terminal). ``heartbeat`` (seconds; lines mode): say which item of
    ``labels`` is still running when no line came for that long (:meth:`Ticker.heartbeat`).

    >>> import io
    >>> log = io.StringIO()
    >>> with counter(1, "items", "lines", stream=log, heartbeat=0.05, labels=["slow"]) as step:
    ...     time.sleep(0.5); step("slow")
    >>> "still on slow" in log.getvalue()
    True
    """
    ticker = Ticker(total, what, show, console=console, stream=stream,
                    redirect_stdout=redirect_stdout)
    if ticker.mode == "off":
        yield lambda label="": None
        return
    ticker.start()
    if heartbeat:
        ticker.heartbeat(float(heartbeat), labels)
    try:
        yield lambda label="": ticker.update(label=label)
    finally:
        ticker.stop()


def _rich_bar(console, redirect_stdout: bool):
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("left"), _mean_time_left(),
                    TextColumn("{task.fields[last]}"),
                    console=console or Console(file=sys.stderr), transient=True,
                    redirect_stdout=redirect_stdout, redirect_stderr=False)


def _clock(seconds: float) -> str:
    """``h:mm:ss``.

    >>> _clock(3725.4)
    '1:02:05'
    """
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}"


def _mean_time_left():
    from rich.progress import ProgressColumn
    from rich.text import Text

    class MeanTimeLeft(ProgressColumn):
        """Time left = elapsed / finished x left, ``-:--:--`` before the first item."""

        def render(self, task):
            left = eta_seconds(task.elapsed, task.completed, task.total)
            if left is None:
                return Text("-:--:--", style="progress.remaining")
            return Text(_clock(left), style="progress.remaining")

    return MeanTimeLeft()


def eta_seconds(elapsed, done, total):
    """Seconds left at the mean pace so far; None before the first item.

    >>> eta_seconds(30.0, 2, 5), eta_seconds(3.0, 0, 5), eta_seconds(None, 1, 5)
    (45.0, None, None)
    """
    if not elapsed or not done or total is None:
        return None
    return float(elapsed) / done * max(total - done, 0)


@contextlib.contextmanager
def pep_spinner(on: bool):
    """The per-solve PEP spinner (:data:`verify.tightness._common.SPINNER`; it draws on a
    terminal only) left on when ``on``, else off meanwhile: with ``--quiet``, and under a
    progress bar (it would fight the bar for the line)."""
    if on:
        yield
        return
    from verify.tightness._common import SPINNER

    token = SPINNER.set(False)
    try:
        yield
    finally:
        SPINNER.reset(token)
