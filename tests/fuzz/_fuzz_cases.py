"""The hand-written hostile inputs of the fuzz suite (CLI and Python API).

``cli_cases(tmp)`` and ``api_cases(tmp)`` build the case lists; ``tmp`` is a scratch directory
for files the cases read or write. References are computed here with mpmath, never with the
code under test. Cases that exercise ``toys.run`` / participation strings (the engine) live in
``toys_run_cases`` and are tested in ``test_fuzz_toys_run.py``.
"""

from __future__ import annotations

import gzip
import json
import math
import pathlib

import mpmath
import numpy as np
from _fuzz_harness import Case, close_to, finite_number, json_value, strict_json_ok

PLATEAU = ["bounds", "eval", "drift.plateau"]


def _mp(fn, **kw):
    with mpmath.workdps(60):
        return float(fn(**{k: mpmath.mpf(v) for k, v in kw.items()}))


def interval_var_ref(p, K):
    q = 1 - p
    return _mp(lambda p, K: (1 - p) / p**2 - (2 * K - 1) * (1 - p) ** K / p
               - (1 - p) ** (2 * K) / p**2, p=p, K=K) if q else 0.0


def interval_mean_ref(p, K):
    return _mp(lambda p, K: 1 / p - (1 - p) ** K / p, p=p, K=K)


def _payload_marker(tmp: pathlib.Path) -> tuple[str, pathlib.Path]:
    marker = tmp / "INJECTED"
    return f"__import__('pathlib').Path({str(marker)!r}).touch()", marker


def _no_marker(marker):
    def check(_out):
        return "code from the command line was executed" if marker.exists() else None
    return check


def cli_cases(tmp: pathlib.Path) -> list[Case]:
    tmp = pathlib.Path(tmp)
    payload, marker = _payload_marker(tmp)
    afile = tmp / "a_file.txt"
    afile.write_text("x")
    good = ["eta=0.2", "tau=10", "L=0.19", "zeta=0.407"]
    run_base = ["run", "fedavg", "--problem", "quadratic", "--problem-opt", "n_clients=3",
                "--problem-opt", "dim=2", "--rounds", "2", "local_steps=2"]
    run = run_base + ["lr=0.05"]
    c = [
        Case("bounds eval ok json", PLATEAU + good + ["--json"], "ok",
             check=json_value("value", 18 * 0.19 * 0.04 * 100 * 0.407**2)),
        Case("bounds eval overflow json", PLATEAU + ["eta=1e200", "tau=1", "L=1", "zeta=1",
                                                     "--json"], "ok", check=strict_json_ok),
        Case("bounds eval duplicate", PLATEAU + good + ["eta=5"], mention="eta"),
        Case("bounds eval nan", PLATEAU + ["eta=nan", "tau=10", "L=0.19", "zeta=0.4"],
             mention="eta"),
        Case("bounds eval inf", PLATEAU + ["eta=inf", "tau=10", "L=0.19", "zeta=0.4"],
             mention="eta"),
        Case("bounds eval text", PLATEAU + ["eta=abc", "tau=10", "L=0.19", "zeta=0.4"],
             mention="eta"),
        Case("bounds eval empty value", PLATEAU + ["eta=", "tau=10", "L=0.19", "zeta=0.4"],
             mention="eta"),
        Case("bounds eval empty name", PLATEAU + ["=5"] + good, mention="="),
        Case("bounds eval complex", PLATEAU + ["eta=1j", "tau=10", "L=0.19", "zeta=0.4"],
             mention="eta"),
        Case("bounds eval tau 2.5", PLATEAU + ["eta=0.2", "tau=2.5", "L=0.19", "zeta=0.4"],
             mention="tau"),
        Case("bounds eval unknown param", PLATEAU + good + ["foo=1"], mention="foo"),
        Case("bounds eval missing param", PLATEAU + ["eta=0.2"], mention="tau"),
        Case("bounds eval unknown id", ["bounds", "eval", "nope.nope"], mention="nope"),
        Case("bounds show unknown id", ["bounds", "show", "nope"], mention="nope"),
        Case("bounds list unknown family", ["bounds", "list", "--family", "nope"],
             mention="nope"),
        Case("bounds eval code payload", PLATEAU + [f"eta={payload}", "tau=1", "L=1", "zeta=1"],
             mention="eta"),
        Case("bounds eval negative", PLATEAU + ["eta=-1", "tau=10", "L=0.19", "zeta=0.4"],
             mention="eta"),
        Case("bounds eval interval_var p=1e-9 K=50",
             ["bounds", "eval", "weight_error.interval_var", "p=1e-9", "K=50", "--json"], "ok",
             check=json_value("value", interval_var_ref(1e-9, 50))),
        Case("bounds eval interval_mean p=1e-17 K=50",
             ["bounds", "eval", "weight_error.interval_mean", "p=1e-17", "K=50", "--json"], "ok",
             check=json_value("value", interval_mean_ref(1e-17, 50))),
        Case("bounds eval subnormal", PLATEAU + ["eta=1e-320", "tau=1", "L=1", "zeta=1",
                                                 "--json"], "ok", check=strict_json_ok),
        Case("bounds eval strict violated", PLATEAU + ["eta=0.2", "tau=10", "L=2", "zeta=0.4",
                                                       "--strict"], mention="eta"),
        Case("bounds eval p=1 on (0,1)", ["bounds", "eval", "weight_error.cutoff_cor4", "p=1",
                                          "T=10"], mention="p"),
        Case("bounds eval no =", PLATEAU + ["eta"], mention="eta"),
        Case("bounds eval huge text", PLATEAU + ["eta=" + "9" * 5000, "tau=1", "L=1", "zeta=1",
                                                 "--json"], mention="eta"),
        # run
        Case("run lr code payload", run_base + [f"lr={payload}"], mention="lr"),
        Case("run lr payload dunder", run_base + ["lr=t.__class__.__mro__"], mention="lr"),
        Case("run lr lambda", run_base + ["lr=lambda: 1"], mention="lr"),
        Case("run lr schedule ok", run_base + ["lr=0.1/sqrt(t+1)"], "ok"),
        Case("run lr inf", run_base + ["lr=1e400"], mention="lr"),
        Case("run lr negative", run_base + ["lr=-0.1"], mention="lr"),
        Case("run lr nan", run_base + ["lr=nan"], mention="lr"),
        Case("run lr division by zero", run_base + ["lr=1/(t-t)"], mention="lr"),
        Case("run lr power tower", run_base + ["lr=9**9**9**9"], mention="lr"),
        Case("run lr deep nesting", run_base + ["lr=" + "(" * 5000 + "t" + ")" * 5000],
             mention="lr"),
        Case("run lr unknown name", run_base + ["lr=exp(x)"], mention="lr"),
        Case("run lr attribute", run_base + ["lr=sqrt.__globals__"], mention="lr"),
        Case("run lr duplicate", run + ["lr=0.2"], mention="lr"),
        Case("run rounds 0", ["run", "fedavg", "--problem", "quadratic", "--rounds", "0"],
             mention="rounds"),
        Case("run rounds text", ["run", "fedavg", "--problem", "quadratic", "--rounds", "x"],
             mention="rounds"),
        Case("run unknown problem", ["run", "fedavg", "--problem", "nope"], mention="nope"),
        Case("run unknown algorithm", ["run", "nope", "--problem", "quadratic"],
             mention="nope"),
        Case("run problem-opt bad", run + ["--problem-opt", "n_clients=0"],
             mention="n_clients"),
        Case("run device numpy bogus", run + ["--device", "bogus"], mention="device"),
        Case("run out missing dir", run + ["--out", str(tmp / "no" / "such" / "t.csv")],
             mention="out"),
        Case("run out empty", run + ["--out", ""], mention="out"),
        Case("run out is a directory", run + ["--out", str(tmp)], mention="out"),
        Case("run out bad suffix", run + ["--out", str(tmp / "t.xyz")], mention="out"),
        Case("run hyper no =", run + ["lr"], mention="lr"),
        # toys
        Case("toys constants unknown", ["toys", "constants", "nope"], mention="nope"),
        Case("toys constants n_clients=0", ["toys", "constants", "quadratic", "n_clients=0"],
             mention="n_clients"),
        Case("toys constants n_clients=abc", ["toys", "constants", "quadratic",
                                              "n_clients=abc"], mention="n_clients"),
        Case("toys constants L=nan", ["toys", "constants", "quadratic", "L=nan"], mention="L"),
        Case("toys constants json", ["toys", "constants", "quadratic", "n_clients=3", "dim=2",
                                     "--json"], "ok", check=strict_json_ok),
        Case("toys constants duplicate", ["toys", "constants", "quadratic", "dim=2", "dim=3"],
             mention="dim"),
        Case("toys constants payload", ["toys", "constants", "quadratic", f"L={payload}"],
             mention="L", check=_no_marker(marker)),
        # tightness
        Case("tightness unknown id", ["tightness", "nope.nope"], mention="nope"),
        Case("tightness bad vary", ["tightness", "drift.plateau", "--vary", "eta=a,b"],
             mention="eta"),
        Case("tightness duplicate", ["tightness", "drift.plateau", "eta=0.1", "tau=1", "L=1",
                                                "zeta=0", "eta=0.2", "--cache-only"],
             mention="eta"),
        # verify (cheap failures: refused before any work)
        Case("verify out empty", ["verify", "--only", "drift.plateau", "--quick", "--out", ""],
             mention="out"),
        Case("verify out is a file", ["verify", "--only", "drift.plateau", "--quick", "--out",
                                      str(afile)], mention="out"),
        Case("verify out missing parent", ["verify", "--only", "drift.plateau", "--quick",
                                           "--out", str(tmp / "no" / "such" / "dir")],
             mention="out"),
        Case("verify device bogus numpy", ["verify", "--only", "drift.plateau", "--quick",
                                           "--device", "bogus", "--out", str(tmp / "v1")],
             mention="device"),
        Case("verify torch device bogus", ["verify", "--only", "drift.plateau", "--quick",
                                           "--backend", "torch", "--device", "bogus",
                                           "--out", str(tmp / "v2")], mention="device"),
        Case("verify only unknown", ["verify", "--only", "nope", "--out", str(tmp / "v3")],
             mention="nope"),
        Case("verify seeds 0", ["verify", "--seeds", "0", "--out", str(tmp / "v4")],
             mention="seeds"),
    ]
    return c


def _write(path: pathlib.Path, data) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def _idx(shape, dtype=0x08, payload=None) -> bytes:
    head = bytes([0, 0, dtype, len(shape)]) + b"".join(int(s).to_bytes(4, "big")
                                                        for s in shape)
    n = int(np.prod(shape))
    return head + (payload if payload is not None else bytes(n))


def _ev(bid, **kw):
    import boundlab

    return lambda: boundlab.get(bid).evaluate(**kw)


def _nan_free(x):
    a = np.asarray(x, dtype=float)
    if np.isnan(a).any():
        return "nan returned for a valid input"
    return None


def api_cases(tmp: pathlib.Path) -> list[Case]:  # noqa: PLR0915 - a table
    import boundlab
    import toys
    from verify.tightness import PEPCache

    tmp = pathlib.Path(tmp)
    good = dict(eta=0.2, tau=10, L=0.19, zeta=0.407)
    pl = "drift.plateau"
    c = [
        Case("get None", lambda: boundlab.get(None), mention="bound id"),
        Case("get int", lambda: boundlab.get(123), mention="bound id"),
        Case("get family only", lambda: boundlab.get("drift"), mention="drift"),
        Case("catalogue bad family", lambda: boundlab.catalogue("nope"), mention="nope"),
        Case("evaluate complex", _ev(pl, **{**good, "eta": 0.2 + 1j}), mention="eta"),
        Case("evaluate complex array", _ev(pl, **{**good, "eta": np.array([0.2 + 0j])}),
             mention="eta"),
        Case("evaluate bool", _ev(pl, **{**good, "tau": True}), mention="tau"),
        Case("evaluate bool array", _ev(pl, **{**good, "tau": np.array([True, True])}),
             mention="tau"),
        Case("evaluate string", _ev(pl, **{**good, "eta": "0.2"}), mention="eta"),
        Case("evaluate None", _ev(pl, **{**good, "eta": None}), mention="eta"),
        Case("evaluate dict", _ev(pl, **{**good, "eta": {"a": 1}}), mention="eta"),
        Case("evaluate ragged list", _ev(pl, **{**good, "eta": [[0.1], [0.1, 0.2]]}),
             mention="eta"),
        Case("evaluate nan", _ev(pl, **{**good, "eta": float("nan")}), mention="eta"),
        Case("evaluate inf", _ev(pl, **{**good, "eta": float("inf")}), mention="eta"),
        Case("evaluate negative zeta", _ev(pl, **{**good, "zeta": -1.0}), mention="zeta"),
        Case("evaluate shapes", _ev(pl, **{**good, "eta": np.ones(2), "tau": np.ones(3)}),
             mention="tau"),
        Case("evaluate_terms shapes", lambda: boundlab.get("drift.fedavg_convex").evaluate_terms(
            D=np.ones(2), eta=np.full(3, .1), tau=1, T=1, sigma=0, M=1, L=1, zeta=1),
             mention="eta"),
        Case("violated_preconditions shapes", lambda: boundlab.get(pl).violated_preconditions(
            eta=np.full(2, .1), tau=1, L=np.ones(3), zeta=1), mention="L"),
        Case("evaluate object array", _ev(pl, **{**good, "eta": np.array([0.1, "a"],
                                                                         dtype=object)}),
             mention="eta"),
        Case("evaluate unknown", _ev(pl, **good, foo=1), mention="foo"),
        Case("evaluate huge int", _ev(pl, **{**good, "tau": 10**400}), mention="tau"),
        Case("interval_var p=1e-9 K=50", _ev("weight_error.interval_var", p=1e-9, K=50), "ok",
             check=close_to(interval_var_ref(1e-9, 50))),
        Case("interval_mean p=1e-17 K=50", _ev("weight_error.interval_mean", p=1e-17, K=50),
             "ok", check=close_to(interval_mean_ref(1e-17, 50))),
        Case("interval_var p=1e-5 K=1e6", _ev("weight_error.interval_var", p=1e-5, K=10**6),
             "ok", check=close_to(interval_var_ref(1e-5, 10**6))),
        Case("fedavg_convex D=1e200 eta=1e200 (5e199)", _ev(
            "drift.fedavg_convex", D=1e200, eta=1e200, tau=1, T=1, sigma=0, M=1, L=1, zeta=0),
             "ok", check=close_to(5e199)),
        Case("fedavg_convex D=1e200 eta=1e150", _ev(
            "drift.fedavg_convex", D=1e200, eta=1e200, tau=1, T=2**53, sigma=0, M=1,
            L=1e-300, zeta=0), "ok", check=_nan_free),
        # an integer parameter beyond 2**53 is not exactly representable: refused (issue 20)
        Case("fedavg_convex T=1e200", _ev(
            "drift.fedavg_convex", D=1e200, eta=1e200, tau=1, T=1e200, sigma=0, M=1,
            L=1e-300, zeta=0), "error", mention="T = 1e+200"),
        Case("plateau tiny", _ev(pl, eta=1e-300, tau=1, L=1e-300, zeta=1e-300), "ok",
             check=_nan_free),
        Case("contraction beta_kappa cancels", _ev("contraction.beta_kappa", beta=1e-10, mu=1,
                                                   gamma=1e-3, E=5), "ok",
             check=close_to(_mp(lambda b, m, g, E: 1 + (1 - b * g * m) ** E / b - 1 / b,
                                b=1e-10, m=1, g=1e-3, E=5))),
        Case("skew.error_free T huge", _ev("skew.error_free", T=2**53, L=1e300, mu=1e-300,
                                           E=1, G=1, sigma=0, rho_bar=1, D0=1), "ok",
             check=_nan_free),
        Case("skew.error_free T=1e300", _ev("skew.error_free", T=1e300, L=1e300, mu=1e-300,
                                            E=1, G=1, sigma=0, rho_bar=1, D0=1), "error",
             mention="T = 1e+300"),
        Case("cutoff_cor4 p tiny", _ev("weight_error.cutoff_cor4", p=1e-20, T=100), "ok",
             check=close_to(_mp(lambda p, T: -mpmath.log(T) / (2 * mpmath.log(1 - p)),
                                p=1e-20, T=100))),
        Case("beta_factor beta 1", _ev("contraction.beta_sc", t=0, L=1, mu=1, beta=1 - 1e-16,
                                       Delta=0, S=1, sigma=0, Gamma=0, E=1, G=1, gamma=0.5),
             "ok", check=finite_number),
    ]
    # toys: weights
    X = [np.ones((2, 1)), np.ones((2, 1)), np.ones((2, 1))]
    y = [np.array([0, 1])] * 3

    def p_uniform(prob):
        p = np.asarray(prob.p)
        return None if np.allclose(p, 1 / 3, rtol=1e-12) else f"p = {p.tolist()}"
    c += [
        Case("logistic weights 1e308", lambda: toys.logistic(X, y, weights=[1e308] * 3), "ok",
             check=p_uniform),
        Case("logistic weights nan", lambda: toys.logistic(X, y, weights=[np.nan, 1, 1]),
             mention="weights"),
        Case("logistic weights zero", lambda: toys.logistic(X, y, weights=[0, 0, 0]),
             mention="weights"),
        Case("logistic weights short", lambda: toys.logistic(X, y, weights=[1, 1]),
             mention="weights"),
        Case("logistic weights complex", lambda: toys.logistic(X, y, weights=[1j, 1, 1]),
             mention="weights"),
        Case("logistic weights text", lambda: toys.logistic(X, y, weights=["a", 1, 1]),
             mention="weights"),
        Case("logistic weights bool", lambda: toys.logistic(X, y, weights=[True, True, True]),
             mention="weights"),
        Case("logistic weights subnormal", lambda: toys.logistic(X, y, weights=[5e-324] * 3),
             "ok", check=p_uniform),
    ]
    # toys: data files
    idx_ok = _idx((2, 2, 2))
    gz = gzip.compress(idx_ok)
    lab = _write(tmp / "labels.idx", _idx((2,)))
    cases_idx = {
        "idx truncated gzip": gz[: len(gz) // 2],
        "idx garbage gzip": b"\x1f\x8b" + b"garbage" * 10,
        "idx empty": b"",
        "idx truncated data": idx_ok[:-3],
        "idx bad magic": b"\x01\x02\x08\x01" + bytes(8),
        "idx zero ndim": bytes([0, 0, 8, 0]),
        "idx huge dims": bytes([0, 0, 8, 2]) + (2**32 - 1).to_bytes(4, "big") * 2,
    }
    for name, data in cases_idx.items():
        path = _write(tmp / f"{name.replace(' ', '_')}.idx", data)
        c.append(Case(name, (lambda p=path: toys.from_dataset("idx", images=p, labels=lab)),
                      mention=pathlib.Path(path).name))
    c.append(Case("idx is a directory", lambda: toys.from_dataset("idx", images=str(tmp),
                                                                  labels=lab), mention="images"))
    c.append(Case("idx labels mismatch", lambda: toys.from_dataset(
        "idx", images=_write(tmp / "ok.idx", idx_ok), labels=_write(
            tmp / "lab3.idx", _idx((3,)))), mention="labels"))
    leafs = {
        "leaf missing x": {"users": ["a"], "num_samples": [1], "user_data": {"a": {"y": [0]}}},
        "leaf ragged x": {"users": ["a"], "num_samples": [2],
                          "user_data": {"a": {"x": [[0, 1], [1]], "y": [0, 1]}}},
        "leaf string x": {"users": ["a"], "num_samples": [2],
                          "user_data": {"a": {"x": [["a", "b"], ["c", "d"]], "y": [0, 1]}}},
        "leaf short num_samples": {"users": ["a", "b"], "num_samples": [2],
                                   "user_data": {"a": {"x": [[0], [1]], "y": [0, 1]},
                                                 "b": {"x": [[0], [1]], "y": [0, 1]}}},
        "leaf users not list": {"users": 5, "num_samples": [2], "user_data": {}},
        "leaf user_data list": {"users": ["a"], "num_samples": [2], "user_data": [1]},
        "leaf nan x": {"users": ["a"], "num_samples": [2],
                       "user_data": {"a": {"x": [[float("nan")], [1]], "y": [0, 1]}}},
        "leaf y nested": {"users": ["a"], "num_samples": [2],
                          "user_data": {"a": {"x": [[0], [1]], "y": [[0, 1], [1]]}}},
        "leaf num_samples text": {"users": ["a"], "num_samples": "x",
                                  "user_data": {"a": {"x": [[0], [1]], "y": [0, 1]}}},
        "leaf x not list": {"users": ["a"], "num_samples": [1],
                            "user_data": {"a": {"x": 3, "y": [0]}}},
        "leaf rec not dict": {"users": ["a"], "num_samples": [1], "user_data": {"a": [1, 2]}},
        "leaf user id unhashable": {"users": [["a"]], "num_samples": [1], "user_data": {}},
    }
    for name, doc in leafs.items():
        path = _write(tmp / f"{name.replace(' ', '_')}.json", doc)
        c.append(Case(name, (lambda p=path: toys.from_dataset("leaf", path=p)),
                      mention=pathlib.Path(path).name))
    c.append(Case("leaf binary garbage", lambda: toys.from_dataset(
        "leaf", path=_write(tmp / "garbage.json", b"\xff\xfe\x00")), mention="garbage.json"))
    # toys: constants of ill-conditioned quadratics
    for ratio in (1e15, 1e17):
        def const_mu(ratio=ratio):
            prob = toys.quadratic(n_clients=2, dim=3, L=ratio, mu=1.0, seed=0)
            return toys.constants(prob).mu

        def check_mu(v):
            if v.how.startswith("exact") and abs(v.value - 1.0) > 1e-8:
                return f"mu = {v.value} labelled {v.how!r} (asked 1)"
            if not math.isfinite(v.value):
                return f"mu = {v.value}"
            return None
        c.append(Case(f"constants mu at L/mu={ratio:g}", const_mu, "ok", check=check_mu))

    def big_quad():
        prob = toys.quadratic(n_clients=2, dim=2, L=1e120, mu=1e119, seed=0)
        cs = toys.constants(prob)
        return {k: v.value for k, v in cs.values().items()}

    def all_finite(d):
        bad = {k: v for k, v in d.items() if not (isinstance(v, float) and math.isfinite(v))}
        return f"non-finite constants {bad}" if bad else None
    c.append(Case("constants large inputs", big_quad, "ok", check=all_finite))

    def huge_quad():  # G^2 ~ 1e400 truly overflows; zeta ~ 1e200 and Gamma do not
        prob = toys.quadratic(n_clients=2, dim=2, L=1e200, mu=1e199, seed=0)
        cs = toys.constants(prob)
        return {k: cs[k].value for k in ("zeta", "Gamma", "L", "mu")}
    c.append(Case("constants L=1e200", huge_quad, "ok", check=all_finite))
    # PEP cache
    from verify.tightness import wc_fedavg_round

    def cache_dir_is_file():
        f = tmp / "cachefile"
        f.write_text("x")
        return wc_fedavg_round(1.0, 0.1, 0.1, 1, 0.5, cache=PEPCache(f)).value

    c.append(Case("PEP cache path is a file", cache_dir_is_file, "ok", check=finite_number))

    def corrupt(mutate):
        def go():
            d = tmp / f"cache_{mutate.__name__}"
            first = wc_fedavg_round(1.0, 0.1, 0.1, 1, 0.5, cache=PEPCache(d)).value
            f = next(d.rglob("*.json"))
            doc = json.loads(f.read_text())
            mutate(doc)
            f.write_text(json.dumps(doc))
            second = wc_fedavg_round(1.0, 0.1, 0.1, 1, 0.5, cache=PEPCache(d))
            third = wc_fedavg_round(1.0, 0.1, 0.1, 1, 0.5, cache=PEPCache(d))
            return first, second.value, third.cached
        return go

    def forged(doc):
        doc["result"]["value"] = doc["result"]["value"] * 1e6

    def malformed(doc):
        doc["result"]["value"] = "abc"
        doc["result"].pop("solver", None)

    def check_repaired(res):
        first, second, third_cached = res
        if second != first:
            return f"cache value {second} used instead of re-solved {first}"
        if not third_cached:
            return "bad entry was not rewritten"
        return None
    c.append(Case("PEP cache forged value", corrupt(forged), "ok", check=check_repaired))
    c.append(Case("PEP cache malformed entry", corrupt(malformed), "ok", check=check_repaired))
    # report output paths
    from verify.report import write_report

    c += [
        Case("write_report empty path", lambda: write_report([], ""), mention="out"),
        Case("write_report onto a file", lambda: write_report([], tmp / "a_file2.txt"
                                                              if (tmp / "a_file2.txt")
                                                              .write_text("x") else None),
             mention="out"),
        Case("write_report missing parent", lambda: write_report([], tmp / "no" / "such" / "d"),
             mention="out"),
    ]
    return c


def toys_run_cases(tmp: pathlib.Path) -> list[Case]:
    """Engine-level inputs (``toys.run``, participation strings, sizes): the lead's engine."""
    import toys

    def prob():
        return toys.make("quadratic", n_clients=3, dim=2, seed=0)

    def run(**kw):
        base = dict(rounds=2, seed=0, lr=0.05, local_steps=1)
        base.update(kw)
        return lambda: toys.run(prob(), "fedavg", **base)

    def finite_trace(tr):
        """Finite measurements, except after a divergence that the trace reports (the rounds
        after ``diverged_at`` never ran: NaN by contract)."""
        gaps = np.asarray(tr.gap if hasattr(tr, "gap") else [], dtype=float)
        end = gaps.size if tr.diverged_at is None else tr.diverged_at + 1
        if not np.isfinite(gaps[:end]).all():
            return "non-finite measurements"
        if tr.diverged_at is not None and not np.isnan(gaps[end:]).all():
            return "values after the reported divergence"
        return None

    return [
        Case("run local_steps 1e12", run(local_steps=10**12), mention="local_steps"),
        Case("run local_steps float 1e12", run(local_steps=1e12), mention="local_steps"),
        Case("run rounds 1e12", run(rounds=10**12), mention="rounds"),
        Case("run rounds float", run(rounds=2.5), mention="rounds"),
        Case("run rounds bool", run(rounds=True), mention="rounds"),
        Case("run rounds 0", run(rounds=0), mention="rounds"),
        Case("run seed negative", run(seed=-1), mention="seed"),
        Case("run lr nan", run(lr=float("nan")), mention="lr"),
        Case("run lr inf", run(lr=float("inf")), mention="lr"),
        Case("run lr negative", run(lr=-1.0), mention="lr"),
        Case("run lr complex", run(lr=0.1j), mention="lr"),
        Case("run lr string", run(lr="0.1"), mention="lr"),
        Case("run lr callable nan", run(lr=lambda t: np.full(np.shape(t), np.nan)),
             mention="lr"),
        Case("run unknown hyper", run(foo=1), mention="foo"),
        Case("run unknown algorithm", lambda: toys.run(prob(), "nope", rounds=1, seed=0),
             mention="nope"),
        Case("run backend bogus", run(backend="bogus"), mention="backend"),
        Case("run numpy device bogus", run(device="bogus"), mention="device"),
        Case("run record bogus", run(record="bogus"), mention="record"),
        Case("run x0 wrong shape", run(x0=np.ones(5)), mention="x0"),
        Case("run x0 nan", run(x0=np.array([np.nan, 0.0])), mention="x0"),
        Case("participation bernoulli:p=abc", run(participation="bernoulli:p=abc"),
             mention="p"),
        Case("participation bernoulli:p=2", run(participation="bernoulli:p=2"), mention="p"),
        Case("participation bernoulli:p=nan", run(participation="bernoulli:p=nan"),
             mention="p"),
        Case("participation bernoulli", run(participation="bernoulli"), mention="p"),
        Case("participation uniform:m=0", run(participation="uniform:m=0"), mention="m"),
        Case("participation uniform:m=99", run(participation="uniform:m=99"), mention="m"),
        Case("participation uniform:m=1.5", run(participation="uniform:m=1.5"), mention="m"),
        Case("participation nope", run(participation="nope"), mention="nope"),
        Case("participation bad option", run(participation="bernoulli:q=0.3"), mention="q"),
        Case("participation no value", run(participation="bernoulli:p"), mention="p"),
        Case("participation payload", run(participation="bernoulli:p=__import__('os')"),
             mention="p"),
        Case("participation markov rate=-1", run(participation="markov:p=0.5,rate=-1"),
             mention="rate"),
        Case("participation cyclic cycle=0", run(participation="cyclic:p=0.5,cycle=0"),
             mention="cycle"),
        Case("participation matrix wrong shape", run(participation=np.ones((5, 5), bool)),
             mention="participation"),
        Case("participation make p=abc", lambda: toys.participation.make("bernoulli", 3,
                                                                        p="abc"), mention="p"),
        Case("participation make n=0", lambda: toys.participation.make("bernoulli", 0, p=0.5),
             mention="n_clients"),
        Case("run diverging lr", run(lr=1e3, rounds=20), "ok", check=finite_trace),
    ]
