"""A constant that cannot be computed in float64 is ``how="unavailable"`` with the reason."""

import math

import toys
from verify.cli import main


def _strict(text):
    import json

    def bad(tok):
        raise ValueError(tok)
    return json.loads(text, parse_constant=bad)


def test_overflowing_heterogeneity_is_unavailable_not_nan_exact():
    c = toys.constants(toys.quadratic(3, 2, heterogeneity=1e200, seed=0))
    for name in ("Gamma", "zeta"):
        v = getattr(c, name)
        assert v.how == "unavailable" and "float64" in v.note, (name, v)
    for name in ("L", "mu"):  # what can be computed still is, exactly
        v = getattr(c, name)
        assert v.how == "exact" and math.isfinite(v.value)
    assert c.L.value == 10.0  # the quadratic's default L (toys.quadratic docstring)


def test_constants_json_is_strict_even_when_unavailable(capsys):
    assert main(["toys", "constants", "quadratic", "n_clients=3", "dim=2",
                 "heterogeneity=1e200", "--json"]) == 0
    doc = _strict(capsys.readouterr().out)
    assert doc["constants"]["Gamma"]["how"] == "unavailable"
