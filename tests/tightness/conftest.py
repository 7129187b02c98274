"""Every tightness test runs with its own PEP cache directory (never the user's)."""

import pytest


@pytest.fixture(autouse=True)
def _pep_cache(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.getbasetemp() / "boundlab-cache"
    monkeypatch.setenv("BOUNDLAB_CACHE", str(root))
    return root
