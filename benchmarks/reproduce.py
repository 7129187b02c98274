"""Benchmark: CPU time of every ``boundlab reproduce`` item (issue 23, item 6).

Per item and size it reports the process time (CPU seconds of the item's process, all its
threads: BLAS threads count) and the wall time of ``verify.reproduce.reproduce(item, out=tmp)``
(the run, its figure and its files, as ``boundlab reproduce`` does them), with the 1-minute load
average read just before each run. Every run is a fresh Python process (timed from inside, after
the imports), so no item profits from a cache another filled. Sizes ``tiny`` and ``quick`` by
default; ``--full`` adds the papers' sizes (hours of CPU: not for routine runs). Runs whose first
time is below ``--cheap`` seconds are repeated, the repeats interleaved across items so that a
change of machine load hits all alike, and the medians reported.

``--device cuda`` times every item twice, interleaved: on the CPU (backend numpy) and with
backend torch on CUDA. Only the items with an MLP or CNN (``001:*``, ``002:cnn``,
``003:table1``'s MLP rows, ``004:fig4``) use the torch backend; the others run numpy whatever
the device, so their two times agree. Without CUDA it exits with status 2 and one line saying why.

Run: ``python -m benchmarks reproduce [ITEM ...] [--sizes tiny,quick] [--full] [--repeat 3]
[--cheap 20] [--device cpu|cuda] [--timeout S] [--json]``

Example
-------
>>> summarise([{"item": "a", "size": "tiny", "device": "cpu", "cpu_s": 2.0, "wall_s": 1.0,
...             "load_1min": 0.5, "outcome": "matches", "error": None},
...            {"item": "a", "size": "tiny", "device": "cpu", "cpu_s": 4.0, "wall_s": 3.0,
...             "load_1min": 1.5, "outcome": "matches", "error": None}])[0]["cpu_s"]
3.0
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
MARK = "@@reproduce-benchmark "
SIZES = ("tiny", "quick", "full")
#: the code one run executes in its own process: the item timed from inside, after the imports
CHILD = r"""
import json, sys, tempfile, time
args = json.loads(sys.argv[1])
from verify.reproduce import reproduce
from verify.reproduce.registry import Config
cfg = Config.sized(args["size"], backend=args["backend"], device=args["device"])
out = {"error": None, "outcome": None}
with tempfile.TemporaryDirectory() as tmp:
    c0, w0 = time.process_time(), time.perf_counter()
    try:
        out["outcome"] = reproduce(args["item"], out=tmp, config=cfg).outcome
    except Exception as exc:  # an item's failure is reported, the others run
        out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    out["cpu_s"], out["wall_s"] = time.process_time() - c0, time.perf_counter() - w0
print("@@reproduce-benchmark " + json.dumps(out))
"""


def _load1() -> float | None:
    try:
        return float(os.getloadavg()[0])
    except OSError:  # pragma: no cover - no getloadavg on this platform
        return None


def _fmt(load) -> str:
    return "n/a" if load is None else f"{load:.2f}"


def cuda_status() -> tuple[bool, str]:
    """(whether torch sees a CUDA device, what it is or why not)."""
    try:
        import torch
    except ImportError:
        return False, "torch is not installed (pip install torch)"
    if not torch.cuda.is_available():
        return False, f"torch {torch.__version__} sees no CUDA device"
    return True, torch.cuda.get_device_name(0)


def run_once(item: str, size: str, device: str, timeout: float | None = None) -> dict:
    """Time one run of ``item`` at ``size`` in a fresh process (``device`` ``"cpu"``: backend
    numpy; ``"cuda"``: backend torch on CUDA); a dict of the times, the load before it, the
    outcome and the error (None when it ran)."""
    args = {"item": item, "size": size, "backend": "numpy" if device == "cpu" else "torch",
            "device": None if device == "cpu" else device}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    rec = {"item": item, "size": size, "device": device, "load_1min": _load1(),
           "cpu_s": math.nan, "wall_s": math.nan, "outcome": None, "error": None}
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        rec.update(error=f"timed out after {timeout:g} s", wall_s=time.perf_counter() - t0)
        return rec
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith(MARK)]
    if p.returncode != 0 or not lines:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        rec["error"] = f"exit {p.returncode}: {tail[0][:300]}"
        return rec
    rec.update(json.loads(lines[-1][len(MARK):]))
    return rec


def _median(values) -> float:
    v = sorted(x for x in values if isinstance(x, (int, float)) and math.isfinite(x))
    if not v:
        return math.nan
    m = len(v) // 2
    return v[m] if len(v) % 2 else 0.5 * (v[m - 1] + v[m])


def summarise(records) -> list[dict]:
    """One row per (item, size, device): the medians of the repeats' CPU and wall times, the
    repeats, the loads seen, the outcome and the first error (in first-seen order)."""
    groups: dict = {}
    for r in records:
        groups.setdefault((r["item"], r["size"], r["device"]), []).append(r)
    out = []
    for (item, size, device), rs in groups.items():
        cpu, wall = _median(r["cpu_s"] for r in rs), _median(r["wall_s"] for r in rs)
        loads = [r["load_1min"] for r in rs if r["load_1min"] is not None]
        errors = [r["error"] for r in rs if r["error"]]
        out.append({"item": item, "size": size, "device": device, "repeats": len(rs),
                    "cpu_s": cpu, "wall_s": wall,
                    "cpu_per_wall": cpu / wall if wall and math.isfinite(wall) else math.nan,
                    "cpu_s_all": [r["cpu_s"] for r in rs],
                    "wall_s_all": [r["wall_s"] for r in rs],
                    "load_1min": [min(loads), max(loads)] if loads else None,
                    "outcome": rs[-1]["outcome"], "error": errors[0] if errors else None})
    return out


def measure(items, sizes, devices, repeat: int, cheap: float, timeout=None, progress=None):
    """Every (item, size, device) once, then the cheap ones (first wall time < ``cheap`` s)
    ``repeat - 1`` more times, interleaved; the list of run records."""
    keys = [(i, s, d) for s in sizes for i in items for d in devices]
    records = []
    for key in keys:
        records.append(run_once(*key, timeout=timeout))
        if progress:
            progress(records[-1])
    first = {(r["item"], r["size"], r["device"]): r for r in records}
    again = [k for k in keys if not first[k]["error"] and first[k]["wall_s"] < cheap]
    for _ in range(repeat - 1):
        for key in again:  # interleaved: a change of load hits every item alike
            records.append(run_once(*key, timeout=timeout))
            if progress:
                progress(records[-1])
    return records


def _strict(x):
    """``x`` with every non-finite float as None (strict JSON)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_strict(v) for v in x]
    return x


def _table(rows) -> str:
    head = (f"{'item':<14} {'size':<6} {'device':<6} {'runs':>4} {'cpu s':>9} {'wall s':>9} "
            f"{'cpu/wall':>8}  {'load':<11} outcome")
    lines = [head, "-" * len(head)]
    for r in rows:
        load = "n/a" if not r["load_1min"] else "{:.2f}-{:.2f}".format(*r["load_1min"])
        lines.append(f"{r['item']:<14} {r['size']:<6} {r['device']:<6} {r['repeats']:>4} "
                     f"{r['cpu_s']:>9.2f} {r['wall_s']:>9.2f} {r['cpu_per_wall']:>8.2f}  "
                     f"{load:<11} {r['error'] or r['outcome']}")
    return "\n".join(lines)


def _totals(rows) -> dict:
    tot: dict = {}
    for r in rows:
        t = tot.setdefault(f"{r['size']}/{r['device']}", {"cpu_s": 0.0, "wall_s": 0.0,
                                                          "items": 0})
        t["cpu_s"] += r["cpu_s"] if math.isfinite(r["cpu_s"]) else 0.0
        t["wall_s"] += r["wall_s"] if math.isfinite(r["wall_s"]) else 0.0
        t["items"] += 1
    return tot


def _parser():
    ap = argparse.ArgumentParser(prog="python -m benchmarks reproduce")
    ap.add_argument("items", nargs="*", help="papers or items (e.g. 002 003:fig6; default all)")
    ap.add_argument("--sizes", default="tiny,quick", help="comma list of tiny, quick (default "
                    "tiny,quick); full only with --full")
    ap.add_argument("--full", action="store_true", help="add the papers' sizes (hours of CPU)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each cheap item (median; "
                    "default 3)")
    ap.add_argument("--cheap", type=float, default=20.0, help="repeat only the runs whose first "
                    "wall time is below this many seconds (default 20)")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda: also time backend "
                    "torch on CUDA")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run (default none)")
    ap.add_argument("--json", action="store_true", help="strict JSON on stdout")
    return ap


def _check(args) -> tuple[list, list, str | None]:
    """(sizes, devices, error line or None)."""
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    bad = [s for s in sizes if s not in ("tiny", "quick")]
    if bad or not sizes:
        return [], [], (f"--sizes {args.sizes}: expected a comma list of tiny, quick (full only "
                        "with --full)")
    if args.full:
        sizes.append("full")
    if args.repeat < 1:
        return [], [], f"--repeat {args.repeat}: expected an integer >= 1"
    if args.device not in ("cpu", "cuda") and not args.device.startswith("cuda:"):
        return [], [], f"--device {args.device}: expected cpu, cuda or cuda:N"
    if args.device == "cpu":
        return sizes, ["cpu"], None
    ok, what = cuda_status()
    if not ok:
        return [], [], f"--device {args.device}: CUDA is not available here ({what}); no GPU " \
            "times measured"
    return sizes, ["cpu", args.device], None


def _fail(msg: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"benchmark": "reproduce", "error": msg}))
    else:
        print(f"error: {msg}")
    return 2


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    sizes, devices, err = _check(args)
    if err:
        return _fail(err, args.json)
    from boundlab.errors import UnknownNameError
    from verify.reproduce import select_many

    try:
        items = [e.id for e in select_many(args.items or None)]
    except UnknownNameError as exc:
        return _fail(str(exc), args.json)
    start = _load1()
    if not args.json:
        print(f"== reproduce items: process and wall time per run ({len(items)} item(s), sizes "
              f"{', '.join(sizes)}, devices {', '.join(devices)}; load average {_fmt(start)}, "
              f"{os.cpu_count()} CPUs); repeats {args.repeat} for runs under {args.cheap:g} s")

    def show(r):
        if not args.json:
            load = _fmt(r["load_1min"])
            print(f"  {r['item']:<14} {r['size']:<6} {r['device']:<6} cpu {r['cpu_s']:8.2f} s  "
                  f"wall {r['wall_s']:8.2f} s  load {load}  "
                  f"{r['error'] or r['outcome']}", flush=True)

    records = measure(items, sizes, devices, args.repeat, args.cheap, args.timeout, show)
    rows = summarise(records)
    report = {"benchmark": "reproduce", "cpus": os.cpu_count(), "load_1min_start": start,
              "load_1min_end": _load1(), "sizes": sizes, "devices": devices,
              "device_name": cuda_status()[1] if len(devices) > 1 else "cpu",
              "repeat": args.repeat, "cheap_s": args.cheap, "rows": rows,
              "totals": _totals(rows)}
    if args.json:
        print(json.dumps(_strict(report), allow_nan=False))
    else:
        print(_table(rows))
        for k, t in report["totals"].items():
            print(f"total {k}: {t['items']} item(s), cpu {t['cpu_s']:.1f} s, wall "
                  f"{t['wall_s']:.1f} s (sums of the medians)")
        print(f"load average at the end: {_fmt(report['load_1min_end'])}")
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
