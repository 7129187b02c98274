"""The accuracy-triggered hybrid switch of BM-B §3.2 (spec seeds-000-001-004 §5.4: "use an
approach until a certain fixed value of accuracy and then change it").

:class:`AccuracySwitch` is a weight rule that delegates to ``rules[stage]``; its state is
``(stage, states)`` (the stage and every sub-rule's state). :class:`SwitchOnAccuracy` is the
round callback that moves the stage on: after a round whose recorded ``metric`` (default
``test_accuracy``, recorded by an earlier callback such as :class:`toys.engine.TestMetrics`)
reaches ``thresholds[stage]``, the rule uses the next sub-rule from the next round on. The
stage is recorded into ``Trace.metrics["switch_stage"]`` every round. The state is plain data,
so checkpoints and resumes keep it. The rule runs on a population's leading axis
(:func:`toys.run_many`) when its sub-rules do; a population has no callbacks, so its stage
stays 0 there, as in a ``toys.run`` without :class:`SwitchOnAccuracy`.

Example
-------
>>> import dataclasses, toys
>>> from toys.algorithms.weights import FedAvgWeights, LossWeighted
>>> from toys.engine import TestMetrics
>>> prob = toys.from_dataset("breast_cancer", n_clients=4, seed=0, test_fraction=0.2)
>>> rule = AccuracySwitch((LossWeighted("fedsoftbetter"), FedAvgWeights()), (0.9,))
>>> algo = dataclasses.replace(toys.algorithms.get("fedavg"), name="softbetter-then-avg",
...                            weights=rule)
>>> tr = toys.run(prob, algo, rounds=4, seed=0, lr=0.5, loss_offset="zero",
...               callbacks=[TestMetrics(prob), SwitchOnAccuracy(rule)])
>>> tr.metrics["switch_stage"].tolist()
[0.0, 0.0, 1.0, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from boundlab.errors import DomainError

__all__ = ["AccuracySwitch", "SwitchOnAccuracy"]


@dataclass(frozen=True)
class AccuracySwitch:
    """``rules[j]`` (weight rules) while the stage is j; the stage moves from j to j + 1 when
    :class:`SwitchOnAccuracy` sees ``metric >= thresholds[j]`` (one threshold per switch)."""

    rules: tuple
    thresholds: tuple
    metric: str = "test_accuracy"

    def __post_init__(self):
        if len(self.rules) < 2 or len(self.thresholds) != len(self.rules) - 1:
            raise DomainError("thresholds", self.thresholds,
                              f"{max(len(self.rules) - 1, 1)} values (one per switch) for "
                              f">= 2 rules")
        for r in self.rules:
            if not (callable(getattr(r, "init", None)) and callable(getattr(r, "update", None))):
                raise DomainError("rules", r, "weight rules (init / update)")

    @property
    def needs_losses(self):
        return any(getattr(r, "needs_losses", True) for r in self.rules)

    @property
    def batched(self) -> bool:
        """Whether every sub-rule runs on a population's leading axis."""
        return all(getattr(r, "batched", False) for r in self.rules)

    @property
    def hyper_names(self):
        names: list[str] = []
        for r in self.rules:
            names += [n for n in getattr(r, "hyper_names", ()) if n not in names]
        return tuple(names)

    def bind(self, hyper, setup):
        """Bind every sub-rule that takes hyper-parameters."""
        rules = tuple(r.bind(hyper, setup) if callable(getattr(r, "bind", None)) else r
                      for r in self.rules)
        return replace(self, rules=rules)

    def init(self, n_clients):
        return (0, tuple(r.init(n_clients) for r in self.rules))

    def update(self, state, *, losses, p, mask, round):
        stage, states = state
        w, s = self.rules[stage].update(states[stage], losses=losses, p=p, mask=mask,
                                        round=round)
        return w, (stage, states[:stage] + (s,) + states[stage + 1:])


class SwitchOnAccuracy:
    """Round callback flipping an :class:`AccuracySwitch`'s stage (put it after the
    callback that records ``rule.metric``)."""

    def __init__(self, rule: AccuracySwitch):
        if not isinstance(rule, AccuracySwitch):
            raise DomainError("rule", rule, "an AccuracySwitch")
        self.rule = rule

    def __call__(self, info) -> None:
        stage, states = info.state.weights
        values = info.state.metrics.get(self.rule.metric)
        if values is None:
            raise DomainError("callbacks", self.rule.metric,
                              "a metric recorded by an earlier callback (e.g. TestMetrics)")
        if stage < len(self.rule.thresholds) and values[info.round] >= \
                self.rule.thresholds[stage]:
            stage += 1
            info.state.weights = (stage, states)
        info.record("switch_stage", stage)
