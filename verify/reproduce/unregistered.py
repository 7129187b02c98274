"""The papers' experiments (spec §6 of each paper) that have no registered item, each with the
reason it cannot run offline: the one public list, which ``boundlab reproduce --list`` prints
after the registered items (:mod:`verify.cli.reproduce_cmd`).

An entry is a figure or table of the spec that no item runs, or the data-set panels / columns
of a figure or table that its item does not cover (one stand-in standing for several data
sets, or the item covering another panel). An item that runs a paper's single data set on a
stand-in (FMNIST, FEMNIST, CIFAR-10 alone) is registered: its ``stand_in`` says so.

Example
-------
>>> [u.ref for u in for_papers(["003"])][:1]
['BC Table 1 / Fig. 2, CIFAR-10 columns (balanced and imbalanced)']
>>> for_papers(["000"])
()
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["NOT_REGISTERED", "Unregistered", "as_dict", "for_papers"]


@dataclass(frozen=True)
class Unregistered:
    """One experiment of ``paper`` (``"000"`` .. ``"004"``) that is not registered: the
    paper's ``ref`` (figure / table, and which panels) and the ``reason``."""

    paper: str
    ref: str
    reason: str


#: every unregistered experiment, in paper order
NOT_REGISTERED: tuple[Unregistered, ...] = (
    Unregistered(
        "002", "FedAU Table 1, CIFAR-10 / CIFAR-100 / CINIC-10 columns on their own data",
        "the data sets need downloads and the CNNs GPU-days (spec seeds-002-003 §6.3); "
        "002:table1 stands in for the SVHN column only; 002:cnn runs the Bernoulli row with the "
        "paper's CNN, on the user's CIFAR-10 .bin files with --data DIR"),
    Unregistered(
        "002", "FedAU Table C.4.1 (the grid search of gamma / eta)",
        "the search ranks each method's step sizes by the CNN's training loss at round 500 on "
        "each of SVHN, CIFAR-10, CIFAR-100 and CINIC-10 (spec seeds-002-003 §6.1): downloads "
        "and GPU-days; the items take the paper's tuned values (SVHN column) instead"),
    Unregistered(
        "002", "FedAU Figs D.2.1-D.2.4 on their own data",
        "SVHN / CIFAR-10 / CIFAR-100 / CINIC-10 need downloads and the CNNs GPU-days; "
        "002:figD2 runs the experiment on the offline stand-in"),
    Unregistered(
        "002", "FedAU Fig. D.2.3's jump at round 10 000",
        "the CIFAR-100 step-size decay schedule of a 20 000-round run, with no counterpart on "
        "the stand-in"),
    Unregistered(
        "003", "BC Table 1 / Fig. 2, CIFAR-10 columns (balanced and imbalanced)",
        "CIFAR-10 needs a download (spec seeds-002-003 §6.3) and its columns have their own "
        "settings (class imbalance a = 100, threshold 0.30; §6.2); 003:table1 runs the FEMNIST "
        "columns on the offline FEMNIST-digits stand-in"),
    Unregistered(
        "003", "BC Figs 6-7, CIFAR-10 and CIFAR-100 panels",
        "CIFAR-10 / CIFAR-100 need downloads; the offline stand-in stands for the FEMNIST "
        "panel"),
    Unregistered(
        "003", "BC Figs 9, 11, 13 (CIFAR-10 twins of Figs 3/8, 10, 12)",
        "CIFAR-10 needs a download"),
)


def for_papers(papers: Iterable[str] | None = None) -> tuple[Unregistered, ...]:
    """The entries of ``papers`` (None: every paper), in :data:`NOT_REGISTERED` order."""
    if papers is None:
        return NOT_REGISTERED
    chosen = set(papers)
    return tuple(u for u in NOT_REGISTERED if u.paper in chosen)


def as_dict(paper: str) -> dict[str, str]:
    """``{ref: reason}`` of ``paper``'s entries (the view its seed modules export).

    >>> list(as_dict("002"))[2]
    'FedAU Figs D.2.1-D.2.4 on their own data'
    """
    return {u.ref: u.reason for u in for_papers([paper])}
