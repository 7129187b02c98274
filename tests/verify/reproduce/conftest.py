"""Every figure a reproduce test draws passes the figure lint (verify.figures.lint): the
tests that run the items at tiny size lint each item's figure as it is saved, at no extra run."""

import pytest

from verify.figures.lint import collecting


@pytest.fixture(autouse=True)
def _every_figure_passes_the_lint():
    with collecting() as found:
        yield
    bad = {name: problems for name, problems in found if problems}
    assert not bad, f"figures a reviewer would reject: {bad}"
