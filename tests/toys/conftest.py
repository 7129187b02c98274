"""Fixtures shared by the toys tests."""

import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """torch on one thread for a module, restored afterwards: tiny tensors, whose intra-op
    threads only add contention on a shared 2-core machine (a CNN gradient was ~40x slower with
    2 busy threads). Does nothing without torch (numpy tests of the module still run)."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
