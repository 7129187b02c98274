"""The one ``name=value`` parser (verify.cli.assign) and every command that reads such words.

Expected values are written by hand from the documented rules; no expected value comes from the
parser itself.
"""

import math

import pytest

from boundlab.errors import BoundlabError, DomainError, UnknownNameError
from verify.cli import assign, main


def test_split_keeps_order_strips_and_refuses_duplicates():
    assert assign.split(["b=2", " a = x y "]) == {"b": "2", "a": "x y"}
    with pytest.raises(DomainError, match="duplicate"):
        assign.split(["a=1", "a=2"])


@pytest.mark.parametrize("word, detail", [
    ("lr", ""), ("=5", "no name before '='"), ("1x=3", "not a Python identifier"),
    ("a b=1", "not a Python identifier"),
])
def test_a_malformed_word_says_how_to_write_it(word, detail):
    with pytest.raises(assign.AssignmentError) as e:
        assign.split([word], what="hyper-parameter", hint="0.1")
    msg = str(e.value)
    assert msg.startswith(f"hyper-parameter: {word!r} is not name=value") and detail in msg
    assert "write it as one word, e.g. " in msg
    assert isinstance(e.value, DomainError)  # exit 2 at the CLI, as every bad input


def test_numbers_are_floats_never_code():
    assert assign.numbers(["eta=0.2", "tau=10", "K=inf", "x=-1e-3"]) == {
        "eta": 0.2, "tau": 10.0, "K": math.inf, "x": -0.001}
    for raw, why in [("nan", "not a number"), ("1e999", "too large"), ("abc", "not a number"),
                     ("__import__('os')", "not a number"), ("1j", "not a number"),
                     ("", "not a number")]:
        with pytest.raises(DomainError, match=why):
            assign.numbers([f"eta={raw}"])


def test_numbers_with_a_bound_name_its_parameters():
    import boundlab

    b = boundlab.get("drift.plateau")
    with pytest.raises(UnknownNameError, match="did you mean 'eta'"):
        assign.numbers(["etaa=1"], b)
    with pytest.raises(DomainError, match="positive real"):
        assign.numbers(["eta=x"], b)


def test_typed_values():
    assert assign.options(["n=5", "L=4.0", "w=1,2.5,x", "iid=True", "o=none", "s=std"]) == {
        "n": 5, "L": 4.0, "w": (1, 2.5, "x"), "iid": True, "o": None, "s": "std"}
    assert assign.typed("1,,2") == (1, 2)
    assert assign.typed("lambda: 1") == "lambda: 1"  # text stays inert text


def test_grid_and_number_list():
    assert assign.grid(["lr=0.1,0.2", "p=full"]) == {"lr": [0.1, 0.2], "p": ["full"]}
    with pytest.raises(DomainError, match="at least one"):
        assign.grid([])
    with pytest.raises(assign.AssignmentError, match=r"e\.g\. --grid lr=v1,v2"):
        assign.grid(["lr"])
    assert assign.number_list("tau=1, 2,4") == ("tau", [1.0, 2.0, 4.0])
    with pytest.raises(UnknownNameError, match="did you mean 'tau'"):
        assign.number_list("taux=1,2", ["tau", "eta"], "x")
    with pytest.raises(DomainError, match="tau"):
        assign.number_list("tau=a,b")


def test_the_old_names_are_the_shared_parser():
    from verify.cli.bounds_cmd import parse_assignments
    from verify.cli.sweep_cmd import parse_grid
    from verify.cli.toys_cmd import parse_options

    assert parse_assignments(["eta=0.5"]) == {"eta": 0.5}
    assert parse_options(["a=1,2"]) == {"a": (1, 2)}
    assert parse_grid(["a=1,2"]) == {"a": [1, 2]}
    with pytest.raises(assign.AssignmentError):
        parse_options(["nope"])


@pytest.mark.parametrize("argv, what", [
    (["bounds", "eval", "drift.plateau", "eta"], "parameter"),
    (["tightness", "drift.plateau", "eta"], "parameter"),
    (["toys", "constants", "quadratic", "dim"], "option"),
    (["run", "fedavg", "--problem", "quadratic", "lr"], "hyper-parameter"),
    (["run", "fedavg", "--problem", "quadratic", "lr=0.1", "--problem-opt", "dim"],
     "--problem-opt"),
    (["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.1", "dim"], "setting"),
    (["falsify", "drift.plateau", "eta"], "setting"),
])
def test_every_command_reads_words_with_the_shared_parser(argv, what, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    word = argv[-1]
    assert err.startswith(f"error: {what}: {word!r} is not name=value") and err.count("\n") == 1


def test_sweep_grid_with_its_values_apart_says_the_one_word(capsys):
    argv = ["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr", "0.1,0.2"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "outside its domain" not in err
    assert "came as a separate word" in err and "e.g. --grid lr=0.1,0.2" in err


def test_a_failed_word_is_a_boundlab_error():
    with pytest.raises(BoundlabError):
        assign.options(["=x"])
