"""Reproductions of the papers' experiments (spec §6 of both specs), beside their numbers.

``verify.reproduce(item)`` runs one registered experiment (``"PAPER:ITEM"``, e.g.
``"000:table3"``; :func:`verify.reproduce.registry.experiments` lists them) and writes its
tidy CSV, a figure in the paper's layout and a Markdown section comparing the paper's reported
numbers with ours under a stated rule (outcome *matches*, *differs* (with how), *tie* (a
difference below the rule's stated resolution) or *not exercised* (the run cannot show the
effect)). The CLI is ``boundlab reproduce [PAPER[:ITEM]] [--quick] [--out DIR] [--backend ...]
[--executor local|dask] [--list] [--data DIR]``. Differences are findings; nothing is tuned
per method to match a paper.

Example
-------
>>> import tempfile, verify
>>> from verify.reproduce.registry import Config
>>> res = verify.reproduce("004:fig5", out=tempfile.mkdtemp(), config=Config(tiny=True))
>>> res.outcome in ("matches", "differs", "tie", "not exercised")
True
"""

from __future__ import annotations

import time

from .registry import Config, Result, experiments, get, select

__all__ = ["Config", "experiments", "reproduce", "reproduce_all"]


def _config(config, quick, backend, data, executor="local"):
    from boundlab.errors import DomainError

    if config is None:
        if backend not in ("auto", "numpy", "torch"):
            raise DomainError("backend", backend, "auto, numpy or torch")
        config = Config(quick=bool(quick), backend=backend, data=data, executor=executor)
    if config.executor not in ("local", "dask"):
        raise DomainError("executor", config.executor, "'local' or 'dask'")
    return config


def reproduce(item: str, *, quick: bool = False, out=None, backend: str = "auto",
              data=None, executor: str = "local", config: Config | None = None,
              force: bool = True) -> Result:
    """Run experiment ``item``; with ``out`` write its folder (and skip it when ``force`` is
    False and it already finished there). Returns the :class:`~.registry.Result` (None when
    skipped). The seed / grid loops run through :func:`verify.sweep` (``executor`` ``"local"``
    or ``"dask"``); with ``out`` their finished points are kept under ``out/.sweeps`` so an
    interrupted item resumes point by point."""
    import os

    from .common import sweep_dir
    from .output import done, write_item

    cfg = _config(config, quick, backend, data, executor)
    exp = get(item)
    if out is not None and not force and done(out, exp, cfg):
        return None
    t0 = time.perf_counter()
    with sweep_dir(None if out is None else os.path.join(os.fspath(out), ".sweeps")):
        res = exp.fn(cfg)
    if out is not None:
        write_item(out, exp, res, cfg, time.perf_counter() - t0)
    return res


def reproduce_all(selection: str | None = None, *, out, quick: bool = False,
                  backend: str = "auto", data=None, executor: str = "local",
                  config: Config | None = None, progress=None) -> list:
    """Run every selected experiment not yet finished under ``out`` (resumable), then write
    ``report.md``; returns ``[(id, status)]`` with status ``"skipped"`` or the outcome."""
    from .output import write_report

    cfg = _config(config, quick, backend, data, executor)
    exps = select(selection)
    status = []
    for e in exps:
        t0 = time.perf_counter()
        res = reproduce(e.id, out=out, config=cfg, force=False)
        st = "skipped" if res is None else res.outcome
        status.append((e.id, st))
        if progress is not None:
            progress(e, st, time.perf_counter() - t0)
    write_report(out, exps)
    return status
