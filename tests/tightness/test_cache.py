"""The JSON disk cache: round trip, keys, atomic writes, corrupt files."""

import json

import pytest

from verify.tightness import PEPCache, default_cache_dir, wc_fedavg_round


def test_round_trip_through_the_cache(tmp_path):
    cache = PEPCache(tmp_path)
    first = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, cache=cache)
    second = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, cache=cache)
    assert not first.cached and second.cached
    assert second.value == first.value and second.lower == first.lower
    assert second.solver == first.solver and second.gap == first.gap
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1 and not list(tmp_path.rglob(".tmp-*"))
    data = json.loads(files[0].read_text())
    assert data["key"]["method"] == "fedavg_round" and data["result"]["ok"]


def test_homogeneity_shares_one_entry(tmp_path):
    # W(c^2 r^2, c zeta) = c^2 W(r^2, zeta): the rescaled problem is a cache hit
    cache = PEPCache(tmp_path)
    a = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, r=1.0, cache=cache)
    b = wc_fedavg_round(4.0, 0.4, 0.025, 2, 0.5 * 4.0 * 2.0, r=2.0, cache=cache)  # zeta/(L r)
    assert b.cached and b.value == pytest.approx(4 * a.value, rel=1e-12)


def test_corrupt_or_foreign_file_is_a_miss(tmp_path):
    cache = PEPCache(tmp_path)
    key = cache.key("m", "c", {"x": 1.0})
    cache.put(key, {"value": 2.0})
    path = next(tmp_path.rglob("*.json"))
    path.write_text("{not json")
    assert cache.get(key) is None
    path.write_text(json.dumps({"key": cache.key("m", "c", {"x": 2.0}), "result": {}}))
    assert cache.get(key) is None
    assert cache.clear() == 1


def test_default_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDLAB_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path / "pep"
    monkeypatch.delenv("BOUNDLAB_CACHE")
    assert default_cache_dir().parts[-3:] == (".cache", "boundlab", "pep")


def test_no_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDLAB_CACHE", str(tmp_path))
    r = wc_fedavg_round(1.0, 0.1, 0.1, 1, 0.5, cache=False)
    assert not r.cached and not list(tmp_path.rglob("*.json"))
