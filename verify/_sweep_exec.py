"""The Dask executor of :func:`verify.sweep` (Dask distributed is imported here only).

Each grid point is one task (:func:`verify.sweep.run_point`); results come back to this
process as they finish and ``finished(index, frame)`` stores them, so files are written where
the sweep was started even when the workers run on other machines.
"""

from __future__ import annotations

from boundlab.errors import DomainError

__all__ = ["run_dask"]


def _distributed():
    try:
        from dask import distributed
    except ImportError:
        raise DomainError("executor", "dask", "an installed executor: install the extra "
                          "with pip install 'boundlab[dask]'", "dask.distributed is missing"
                          ) from None
    return distributed


def run_dask(tasks, finished, *, scheduler=None, n_workers=2) -> None:
    """Run ``run_point(task)`` for every task on a cluster; ``finished(i, frame)`` each."""
    from toys.validation import check_int

    from .sweep import run_point

    dd = _distributed()
    if not tasks:
        return
    cluster = None
    if scheduler is None:
        n_workers = check_int("n_workers", n_workers, lo=1)
        cluster = dd.LocalCluster(n_workers=min(n_workers, len(tasks)), threads_per_worker=1,
                                  processes=True, dashboard_address=None)
        client = dd.Client(cluster)
    else:
        if not isinstance(scheduler, str) or "://" not in scheduler:
            raise DomainError("scheduler", scheduler, "a Dask scheduler address such as "
                              "'tcp://127.0.0.1:8786'")
        try:
            client = dd.Client(scheduler, timeout="10s")
        except OSError as exc:
            raise DomainError("scheduler", scheduler, "the address of a running Dask "
                              "scheduler", str(exc)) from None
    try:
        futures = client.map(run_point, tasks, pure=False)
        index = {f.key: t[1] for f, t in zip(futures, tasks)}
        for fut in dd.as_completed(futures):
            finished(index[fut.key], fut.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
