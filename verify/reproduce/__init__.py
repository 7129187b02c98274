"""Reproductions of the papers' experiments (spec §6 of both specs), beside their numbers.

``verify.reproduce(item)`` runs one registered experiment (``"PAPER:ITEM"``, e.g.
``"000:table3"``; :func:`verify.reproduce.registry.experiments` lists them) and writes its
tidy CSV, a figure in the paper's layout and a Markdown section comparing the paper's reported
numbers with ours under a stated rule (outcome *matches* or *differs*, with how). The CLI is
``boundlab reproduce [PAPER[:ITEM]] [--quick] [--out DIR] [--backend ...] [--list]
[--data DIR]``. Differences are findings; nothing is tuned per method to match a paper.

Example
-------
>>> import tempfile, verify
>>> from verify.reproduce.registry import Config
>>> res = verify.reproduce("004:fig5", out=tempfile.mkdtemp(), config=Config(tiny=True))
>>> res.outcome in ("matches", "differs")
True
"""

from __future__ import annotations

import time

from .registry import Config, Result, experiments, get, select

__all__ = ["Config", "experiments", "reproduce", "reproduce_all"]


def _config(config, quick, backend, data):
    if config is not None:
        return config
    from boundlab.errors import DomainError

    if backend not in ("auto", "numpy", "torch"):
        raise DomainError("backend", backend, "auto, numpy or torch")
    return Config(quick=bool(quick), backend=backend, data=data)


def reproduce(item: str, *, quick: bool = False, out=None, backend: str = "auto",
              data=None, config: Config | None = None, force: bool = True) -> Result:
    """Run experiment ``item``; with ``out`` write its folder (and skip it when ``force`` is
    False and it already finished there). Returns the :class:`~.registry.Result` (None when
    skipped)."""
    from .output import done, write_item

    cfg = _config(config, quick, backend, data)
    exp = get(item)
    if out is not None and not force and done(out, exp, cfg):
        return None
    t0 = time.perf_counter()
    res = exp.fn(cfg)
    if out is not None:
        write_item(out, exp, res, cfg, time.perf_counter() - t0)
    return res


def reproduce_all(selection: str | None = None, *, out, quick: bool = False,
                  backend: str = "auto", data=None, config: Config | None = None,
                  progress=None) -> list:
    """Run every selected experiment not yet finished under ``out`` (resumable), then write
    ``report.md``; returns ``[(id, status)]`` with status ``"skipped"`` or the outcome."""
    from .output import write_report

    cfg = _config(config, quick, backend, data)
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
