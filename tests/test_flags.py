"""LAZYARR_FLAGS parsing: known flags, booleans, lists, and loud failures on typos."""

import pytest

from lazyarr._flags import Flags, parse_flags


def test_empty_flags_are_the_defaults():
    assert parse_flags("") == Flags()


def test_values_booleans_and_lists():
    flags = parse_flags("--backend=interpreter --verify --dump_to=/tmp/x --disable_passes=cse,dce")
    assert flags.backend == "interpreter"
    assert flags.verify is True
    assert flags.dump_to == "/tmp/x"
    assert flags.disable_passes == ("cse", "dce")
    assert parse_flags("--verify=false").verify is False


@pytest.mark.parametrize("text, message", [
    ("--bakend=cpu", "unknown flag --bakend"),
    ("backend=cpu", "expected --name"),
    ("--verify=maybe", "true/false"),
])
def test_mistakes_raise_with_the_known_flags(text, message):
    with pytest.raises(ValueError, match=message):
        parse_flags(text)
