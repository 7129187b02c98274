"""The Dask executor of :func:`verify.sweep` (Dask distributed is imported here only).

Each grid point is one task (:func:`verify.sweep.api.run_point`); results come back to this
process as they finish and ``finished(index, frame)`` stores them, so files are written where
the sweep was started even when the workers run on other machines.

A scheduler address is checked before any work (:func:`check_scheduler`): ``tcp://HOST:PORT``
or ``tls://HOST:PORT`` with a port in 1..65535. Connecting is bounded by ``connect_timeout``
seconds (default :data:`CONNECT_TIMEOUT`): a first connection reads the scheduler's handshake
itself, refusing a peer that does not answer in time or answers something that is not a Dask
message (a huge length prefix is refused before anything is allocated), and the Dask client is
then started with the same deadline. Each failure is a :class:`~boundlab.errors.DomainError`
naming ``scheduler``. A Dask scheduler runs code on its workers and sends pickled results:
connect only to one you trust.

A local cluster starts its workers as new Python processes (multiprocessing's ``spawn``), and
each re-runs the top level of the script that started it. A script that runs a Dask sweep at
its top level, outside an ``if __name__ == "__main__":`` block, would so start a cluster in
every worker (Dask's "Nanny failed to start"): :func:`check_main_guard` finds that call in the
script's source before any worker starts and raises :class:`UnguardedScriptError` saying what
to add.
"""

from __future__ import annotations

import ast
import contextlib
import logging
import socket
import struct
import threading
import time

from boundlab.errors import BoundlabError, DomainError

__all__ = ["run_dask", "close_local_clusters", "check_connect", "check_main_guard",
           "check_scheduler", "probe_scheduler", "CONNECT_TIMEOUT", "UnguardedScriptError"]

#: seconds a scheduler has to accept the connection and answer (``connect_timeout``)
CONNECT_TIMEOUT = 10.0
_SCHEMES = ("tcp", "tls")
_HANDSHAKE_MAX = 1 << 20  # a Dask handshake is ~100 bytes
_DOMAIN = "the address of a running Dask scheduler, tcp://HOST:PORT or tls://HOST:PORT"


def _distributed():
    try:
        from dask import distributed
    except ImportError:
        raise DomainError("executor", "dask", "an installed executor: install the extra "
                          "with pip install 'boundlab[dask]'", "dask.distributed is missing"
                          ) from None
    return distributed


def _timeout(connect_timeout) -> float:
    from toys.validation import check_float

    if connect_timeout is None:
        return CONNECT_TIMEOUT
    return check_float("connect_timeout", connect_timeout, lo=0.0, hi=3600.0, lo_open=True)


def check_connect(scheduler, connect_timeout) -> None:
    """Refuse a bad ``connect_timeout`` or scheduler address (None: none given)."""
    if scheduler is None:
        _timeout(connect_timeout)
    else:
        check_scheduler(scheduler, connect_timeout)


def check_scheduler(scheduler, connect_timeout=None) -> tuple[str, str, int, float]:
    """``(scheme, host, port, timeout)`` of a scheduler address, or DomainError.

    >>> check_scheduler("tcp://127.0.0.1:8786")
    ('tcp', '127.0.0.1', 8786, 10.0)
    >>> check_scheduler("127.0.0.1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: scheduler = '127.0.0.1' is outside its domain: ... (no scheme)
    """
    timeout = _timeout(connect_timeout)
    if not isinstance(scheduler, str) or "://" not in scheduler:
        raise DomainError("scheduler", scheduler, _DOMAIN, "no scheme")
    scheme, _, loc = scheduler.partition("://")
    if scheme not in _SCHEMES:
        raise DomainError("scheduler", scheduler, _DOMAIN, f"unknown scheme {scheme!r}")
    if loc.startswith("["):
        host, sep, port = loc[1:].partition("]:")
    else:
        host, sep, port = loc.rpartition(":")
    if not sep or not port:
        raise DomainError("scheduler", scheduler, _DOMAIN, "no port")
    if not host or not host.isprintable() or any(c.isspace() or c in "/[]@" for c in host):
        raise DomainError("scheduler", scheduler, _DOMAIN, "no valid host")
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        raise DomainError("scheduler", scheduler, _DOMAIN, "the port is not in 1..65535")
    return scheme, host, int(port), timeout


def probe_scheduler(scheduler, connect_timeout=None) -> None:
    """Connect to ``scheduler`` and read its Dask handshake within ``connect_timeout``
    seconds, or DomainError naming ``scheduler`` (also usable alone, e.g. before a suite)."""
    scheme, host, port, timeout = check_scheduler(scheduler, connect_timeout)
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        raise DomainError("scheduler", scheduler, _DOMAIN,
                          f"no connection within {timeout:g} s") from None
    except OSError as exc:
        raise DomainError("scheduler", scheduler, _DOMAIN,
                          f"cannot connect: {exc.strerror or exc}") from None
    with sock:
        if scheme == "tls":  # the client speaks first: the client's deadline covers the rest
            return
        (size,) = struct.unpack("Q", _recv(sock, 8, deadline, scheduler, timeout))
        if not 16 <= size <= _HANDSHAKE_MAX:
            raise DomainError("scheduler", scheduler, _DOMAIN, f"it answered a message of "
                              f"{size} bytes, not a Dask handshake")
        body = _recv(sock, size, deadline, scheduler, timeout)
    (n,) = struct.unpack_from("Q", body)
    ok = 1 <= n <= size // 8 - 1
    if ok:
        lengths = struct.unpack_from(f"{n}Q", body, 8)
        ok = sum(lengths) == size - 8 * (n + 1)
    if not ok:
        raise DomainError("scheduler", scheduler, _DOMAIN, "it answered something that is "
                          "not a Dask handshake")


def _recv(sock, n: int, deadline: float, scheduler, timeout: float) -> bytes:
    """Exactly ``n`` bytes from ``sock`` before ``deadline``, or DomainError."""
    chunks, got = [], 0
    while got < n:
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            chunk = sock.recv(min(n - got, 1 << 16))
        except TimeoutError:
            raise DomainError("scheduler", scheduler, _DOMAIN,
                              f"it accepted the connection but did not answer within "
                              f"{timeout:g} s (connect_timeout)") from None
        except OSError as exc:
            raise DomainError("scheduler", scheduler, _DOMAIN,
                              f"the connection failed: {exc.strerror or exc}") from None
        if not chunk:
            raise DomainError("scheduler", scheduler, _DOMAIN,
                              "it closed the connection without a Dask handshake")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _client(dd, scheduler: str, timeout: float):
    """A Dask client of ``scheduler``, started in a thread that is given up on after the
    deadline (Dask's own timeout does not cover every step of the handshake)."""
    from boundlab.integrity import escape

    box: dict = {}

    def start():
        try:
            box["client"] = dd.Client(scheduler, timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 - MemoryError of a garbage peer included
            box["error"] = exc

    th = threading.Thread(target=start, name="boundlab-dask-connect", daemon=True)
    with _quiet("distributed.protocol.core", "distributed.comm", "distributed.client"):
        th.start()  # a garbage peer's errors come back as one DomainError, not log tracebacks
        th.join(timeout + 2.0)
    if th.is_alive():
        raise DomainError("scheduler", scheduler, _DOMAIN, f"the Dask client did not connect "
                          f"within {timeout:g} s (connect_timeout)")
    if "error" in box:
        exc = box["error"]
        raise DomainError("scheduler", scheduler, _DOMAIN, escape(
            f"{type(exc).__name__}: {exc}")[:200]) from None
    return box["client"]


@contextlib.contextmanager
def _quiet(*names):
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def run_dask(tasks, finished, *, run, scheduler=None, n_workers=2,
             connect_timeout=None) -> None:
    """Run ``run(task)`` for every task on a cluster (``run`` is
    :func:`verify.sweep.api.run_point`: passed in, so that this module does not import the sweep
    that imports it); ``finished(i, frame)`` each."""
    from toys.validation import check_int

    timeout = _timeout(connect_timeout)
    dd = _distributed()
    if not tasks:
        return
    if scheduler is not None:
        probe_scheduler(scheduler, timeout)
    own = None
    if scheduler is None:
        n_workers = check_int("n_workers", n_workers, lo=1)
        check_main_guard(_start_method())
        client = _local_client(dd, n_workers)
    else:
        own = client = _client(dd, scheduler, timeout)
    try:
        futures = client.map(run, tasks, pure=False)
        index = {f.key: t[1] for f, t in zip(futures, tasks)}
        for fut in dd.as_completed(futures):
            finished(index[fut.key], fut.result())
    finally:
        if own is not None:
            own.close()


#: the local cluster of this process, kept for the next sweep: ``{n_workers: (cluster,
#: client)}``. Starting one costs seconds (new Python processes that import numpy, toys and
#: verify); an experiment runs several sweeps in a row. Closed at interpreter exit.
_LOCAL: dict = {}


def _local_client(dd, n_workers: int):
    """The process's local cluster of ``n_workers`` workers (one thread each), started on first
    use and reused while it runs."""
    entry = _LOCAL.get(n_workers)
    if entry is not None and entry[1].status == "running" and entry[0].status.name == "running":
        return entry[1]
    if entry is not None:
        _close(entry)
    cluster = dd.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                              dashboard_address="127.0.0.1:0")  # local only, any free port
    _LOCAL[n_workers] = (cluster, dd.Client(cluster))
    if len(_LOCAL) == 1:
        import atexit

        atexit.register(close_local_clusters)
    return _LOCAL[n_workers][1]


def _close(entry) -> None:
    for obj in (entry[1], entry[0]):
        with contextlib.suppress(Exception):
            obj.close()


def close_local_clusters() -> None:
    """Close the local clusters kept by :func:`run_dask` (also done at interpreter exit)."""
    while _LOCAL:
        _close(_LOCAL.popitem()[1])


class UnguardedScriptError(BoundlabError):
    """A script starts a local Dask cluster at its top level, outside an
    ``if __name__ == "__main__":`` block (see the module docstring)."""


def _start_method() -> str:
    """How the local cluster starts its worker processes (Dask's setting, default spawn)."""
    import dask

    return str(dask.config.get("distributed.worker.multiprocessing-method", "spawn"))


def check_main_guard(method: str = "spawn") -> None:
    """Refuse to start local worker processes from the top level of the running script when
    that line is outside an ``if __name__ == "__main__":`` block (the workers would re-run
    it). Nothing to check with ``fork``, from an interactive session, a notebook, ``-c``, a
    package run as ``python -m pkg`` (its ``__main__`` is not re-run), or when the script's
    source cannot be read; a function called from the guarded block is fine.
    """
    import sys

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    name = getattr(getattr(main, "__spec__", None), "name", None) or ""
    if method == "fork" or not path or name == "__main__" or name.endswith(".__main__"):
        return  # as multiprocessing: a package's __main__ (python -m pkg) is not re-run
    line = _top_level_line(main)
    if line is None:
        return
    guarded = _guarded_lines(path)
    if guarded is None or any(lo <= line <= hi for lo, hi in guarded):
        return
    from boundlab.integrity import escape

    raise UnguardedScriptError(
        f"{escape(str(path))}, line {line}: a local Dask cluster is started from the top level "
        f"of the script; its workers are new Python processes that re-run that top level, so "
        f"each would start a cluster again. Put the code that runs it under "
        f"'if __name__ == \"__main__\":' (as the last block of the script), or pass "
        f"scheduler= a running cluster's address")


def _top_level_line(main):
    """The line of the running script's top level that is executing now (the call that led
    here), or None when this was not called from the script's top level."""
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>":
            return frame.f_lineno
        frame = frame.f_back
    return None


def _guarded_lines(path):
    """``[(first, last)]`` line spans of the top-level ``if __name__ == "__main__":`` blocks
    of the script at ``path`` (read, parsed, never run); None if it cannot be read."""
    try:
        with open(path, "rb") as fh:
            source = fh.read(8 << 20)
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return None
    return [(node.lineno, node.end_lineno) for node in tree.body
            if isinstance(node, ast.If) and _is_main_test(node.test)]


def _is_main_test(test) -> bool:
    """``__name__ == "__main__"`` (either side; also inside an ``and``)."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 \
                and isinstance(node.ops[0], ast.Eq):
            sides = [node.left, *node.comparators]
            names = {s.id for s in sides if isinstance(s, ast.Name)}
            consts = {s.value for s in sides if isinstance(s, ast.Constant)}
            if names == {"__name__"} and consts == {"__main__"}:
                return True
    return False
