"""The experiments with no registered item: one public list, each with a reason, printed by
``boundlab reproduce --list`` (for the papers selected) and still seen by the seed modules."""

import pytest

from verify.cli import main
from verify.cli.reproduce_cmd import UNREGISTERED_HEAD
from verify.reproduce import registry, seed002_figs_d, seed003_figs, unregistered
from verify.reproduce.registry import PAPERS, experiments

ENTRIES = registry.NOT_REGISTERED
# the entries the two seed modules held before the public list (issue text, spec §6.3)
OLD_002 = {"FedAU Figs D.2.1-D.2.4 on their own data", "FedAU Fig. D.2.3's jump at round 10 000"}
OLD_003 = {"BC Figs 6-7, CIFAR-10 and CIFAR-100 panels",
           "BC Figs 9, 11, 13 (CIFAR-10 twins of Figs 3/8, 10, 12)"}


def _listed(capsys, *words):
    assert main(["reproduce", "--list", *words]) == 0
    out = capsys.readouterr().out
    items, _, rest = out.partition(UNREGISTERED_HEAD)
    return items, rest.strip("\n").splitlines()


def test_every_entry_has_a_paper_a_ref_and_a_reason():
    assert ENTRIES is unregistered.NOT_REGISTERED and len(ENTRIES) >= 7
    refs = {e.ref for e in experiments()}
    for u in ENTRIES:
        assert u.paper in PAPERS, u
        assert u.ref.strip() and u.reason.strip(), u
        assert u.ref not in refs  # not a registered item's reference
    refs = [(u.paper, u.ref) for u in ENTRIES]
    assert len(set(refs)) == len(refs)
    assert [u.paper for u in ENTRIES] == sorted(u.paper for u in ENTRIES)  # paper order


def test_list_prints_each_entry_after_the_items(capsys):
    items, lines = _listed(capsys)
    assert items.count("\n") == len(experiments()) + 1  # the items, then one blank line
    assert len(lines) == len(ENTRIES)
    for line, u in zip(lines, ENTRIES):
        assert line.split()[0] == u.paper and line.endswith(f"{u.ref}: {u.reason}")


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_list_of_one_paper_prints_only_its_entries(capsys, paper):
    items, lines = _listed(capsys, paper)
    mine = [u for u in ENTRIES if u.paper == paper]
    assert [line.split()[0] for line in lines] == [paper] * len(mine)
    assert all(f"{u.ref}: {u.reason}" in "\n".join(lines) for u in mine)
    others = [u for u in ENTRIES if u.paper != paper]
    assert not any(u.reason in items or u.reason in "\n".join(lines) for u in others)
    if not mine:  # no section at all
        assert UNREGISTERED_HEAD not in items and lines == []


def test_known_gaps_are_listed():
    # the spec (seeds-002-003 §6.1-§6.3) names these; no registered item runs them
    assert {u.ref for u in ENTRIES if u.paper == "002"} >= OLD_002 | {
        "FedAU Table C.4.1 (the grid search of gamma / eta)"}
    assert any(u.paper == "003" and "CIFAR-10 columns" in u.ref for u in ENTRIES)


def test_the_seed_modules_still_export_their_papers_entries():
    assert "NOT_REGISTERED" in seed003_figs.__all__
    assert set(seed002_figs_d.NOT_REGISTERED) >= OLD_002
    assert set(seed003_figs.NOT_REGISTERED) >= OLD_003
    for mod, paper in ((seed002_figs_d, "002"), (seed003_figs, "003")):
        assert mod.NOT_REGISTERED == {u.ref: u.reason for u in ENTRIES if u.paper == paper}
        assert all(isinstance(v, str) and v for v in mod.NOT_REGISTERED.values())
