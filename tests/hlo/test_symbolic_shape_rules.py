"""Shape rules meeting placeholder sizes (symbolic_sizes.py): a block that cannot fit the bound of
a small placeholder is still refused; blocks of placeholder sizes are trusted (the concrete
module they came from was checked)."""

import pytest

from lazyarr import shapes
from lazyarr.hlo import Literal, make
from lazyarr.hlo.op import HloError


def _placeholder_parameter(size: int):
    return make("parameter", number=0, shape=(shapes.placeholder(0, size),), dtype="float32")


def test_dynamic_slice_of_a_small_placeholder_refuses_a_block_past_its_bound():
    operand = _placeholder_parameter(5)  # at most SMALL_SIZE elements
    start = make("constant", literal=Literal(0, "int64"))
    with pytest.raises(HloError, match="exceed"):
        make("dynamic-slice", [operand, start], sizes=(shapes.SMALL_SIZE + 1,))
    assert make("dynamic-slice", [operand, start], sizes=(3,)).shape == (3,)
    large = _placeholder_parameter(5000)  # unbounded: any block may fit
    assert make("dynamic-slice", [large, start], sizes=(4000,)).shape == (4000,)
