"""perflab.contract.knobs: one validator for every study's declared matrix record."""

from dataclasses import dataclass

import pytest

from perflab.contract.knobs import (
    Choices,
    Int,
    Ints,
    KeysOf,
    MatrixError,
    Number,
    SameAs,
    knob,
    validate,
)


@dataclass(frozen=True)
class Toy:
    """A record with one knob of each way a default is given."""

    things: list = knob(Choices(("a", "b")), "required, no default")
    sizes: list = knob(Ints(most=100, most_is="the toy's limit"), "required list")
    run: list = knob(Choices(KeysOf("sizes"), empty="all"), "empty: every size", [])
    repeats: int = knob(Int(), "one default", 3)
    spare: int = knob(Int(minimum=0), "another key's value by default", SameAs("repeats"))
    seconds: float = knob(Number(), "a float", 1)


def test_defaults_are_filled_in_declaration_order():
    toy = validate(Toy, "m", {"things": ["a"], "sizes": [1, 2]}, set())
    assert toy == Toy(things=["a"], sizes=[1, 2], run=[1, 2], repeats=3, spare=3, seconds=1.0)
    assert isinstance(toy.seconds, float)
    assert validate(Toy, "m", {"things": ["b"], "sizes": [5], "repeats": 2}, set()).spare == 2


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"sizes": [1]}, r"m\.things: expected a non-empty list"),  # required, missing
        ({"things": ["a"], "sizes": [1], "repeats": True}, r"m\.repeats: True is not an integer"),
        ({"things": ["a"], "sizes": [101]}, r"m\.sizes: 101 is above 100 \(the toy's limit\)"),
        ({"things": ["a"], "sizes": [1], "spare": -1}, r"m\.spare: -1 is not an integer >= 0"),
        ({"things": ["a"], "sizes": [1], "seconds": "1"}, r"m\.seconds: '1' is not a positive"),
        ({"things": ["a"], "sizes": [1], "sise": [2]}, r"m: unknown key\(s\) \['sise'\]"),
        ("things", r"m: expected a mapping"),
    ],
)
def test_a_bad_config_is_refused_naming_the_key(config, message):
    with pytest.raises(MatrixError, match=message):
        validate(Toy, "m", config, set())


def test_a_choice_from_an_earlier_key_names_what_it_may_be():
    toy = validate(Toy, "m", {"things": ["a"], "sizes": [7, 9], "run": [9]}, set())
    assert toy.run == [9]
    with pytest.raises(MatrixError, match=r"m\.run: unknown value 8; choose from \[7, 9\]"):
        validate(Toy, "m", {"things": ["a"], "sizes": [7, 9], "run": [8]}, set())
