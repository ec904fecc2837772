"""einsum against NumPy: subscripts tables run with hypothesis, ellipsis broadcasting, errors.

Values as in test_linalg: integer dtypes over their full range (wrapping products are exact in
any order), small integers (-8..8) for floating and complex dtypes and for every operand when
the result is inexact, so the results compare exactly although NumPy's einsum loops and the
HLO dots sum in different orders (test_linalg's float test covers 'ij,jk->ik' with a tolerance).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import linalg
from tests.frontend.products import PRODUCT_DTYPES, assert_matches, exact_array


def call_numpy(function, operands, keywords):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return np.asarray(function(*operands, **keywords)), None
        except (ValueError, TypeError) as error:
            return None, error


# --- tables ------------------------------------------------------------------------------------

EINSUM_SUBSCRIPTS = [
    "ij,jk->ik",
    "bij,bjk->bik",
    "ii",
    "ii->i",
    "ij->ji",
    "i,j->ij",
    "ijk->",
    "ij,ij->ij",
    "ij->j",
    "iij->j",
    "ij,jk,kl->il",
    "ij,ji",
    "i,i",
    "ijk,jl->ilk",
    "ij,jk",
    "ba",
    "Ab,bC",
    "i,i,i->i",
    "ij,kl->",
    ",ij->ij",
]


def _label_shapes(data, subscripts):
    inputs = subscripts.split("->")[0].split(",")
    sizes = {label: data.draw(st.integers(0, 3), label=f"size {label}") for label in set("".join(inputs))}
    return [tuple(sizes[label] for label in term) for term in inputs]


@pytest.mark.parametrize("subscripts", EINSUM_SUBSCRIPTS)
@settings(max_examples=15)  # 20 subscripts: fewer examples each keeps the file fast
@given(data=st.data())
def test_einsum_matches_numpy(subscripts, data):
    shapes = _label_shapes(data, subscripts)
    dtypes = [data.draw(st.sampled_from(PRODUCT_DTYPES), label="dtype") for _ in shapes]
    operands = [exact_array(data, dtype, shape, "operand", dtypes) for dtype, shape in zip(dtypes, shapes)]
    expected, error = call_numpy(np.einsum, [subscripts, *operands], {})
    assert error is None, error
    assert_matches(linalg.einsum(subscripts, *[la.asarray(operand) for operand in operands]), expected)


@pytest.mark.parametrize("subscripts", ["ij,jk->ik", "ii->i", "ij->ji", "ij,j->i", "iij->j", "...ij,...jk->...ik"])
@settings(max_examples=10)
@given(data=st.data())
def test_einsum_replays_the_general_paths_graph(subscripts, data):
    """A second einsum of the same subscripts, shapes and dtypes is replayed from a template
    (einsum._EINSUMS): its node is the one the general path (`_summed` of the parse) makes,
    and both calls read as NumPy."""
    from lazyarr.frontend import einsum as einsum_module

    shapes = _label_shapes(data, subscripts.replace("...", "b"))
    dtypes = [data.draw(st.sampled_from(PRODUCT_DTYPES), label="dtype") for _ in shapes]
    requested = data.draw(st.sampled_from([None, np.float64]), label="dtype=")
    keywords = {} if requested is None else {"dtype": requested, "casting": "unsafe"}
    # Computed in float64 when asked: operands small enough that sums of products stay exact there
    # (int64 values times 25 past 2**53 summed in another order than NumPy's differed in the last bit).
    computed_in = [*dtypes, *([] if requested is None else [np.dtype(requested)])]
    for _ in range(2):  # the first call records, the second replays
        operands = [exact_array(data, dtype, shape, "operand", computed_in) for dtype, shape in zip(dtypes, shapes)]
        expected, error = call_numpy(np.einsum, [subscripts, *operands], keywords)
        assert error is None, error
        arrays = [la.asarray(operand) for operand in operands]
        got = linalg.einsum(subscripts, *arrays, **keywords)
        replayed = got._node  # (before evaluation binds the result to a leaf)
        assert_matches(got, expected)
    labels, output = einsum_module._parse(subscripts, arrays)
    result_dtype = got.dtype  # (NumPy's: checked above)
    assert replayed is einsum_module._summed(subscripts, [array._node for array in arrays], labels, output,
                                             result_dtype)


@pytest.mark.parametrize(
    "subscripts", ["...ij,...jk->...ik", "...ii->...i", "i...,...i", "...,...", "a...->...a"]
)
@given(data=st.data())
def test_einsum_ellipsis_broadcasting(subscripts, data):
    terms = subscripts.split("->")[0].split(",")
    batches = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=len(terms), max_dims=2, max_side=3)
    ).input_shapes
    size = data.draw(st.integers(1, 3))
    shapes = []
    for term, batch in zip(terms, batches):
        before, _, after = term.partition("...")
        shapes.append((size,) * len(before) + batch + (size,) * len(after))
    operands = [exact_array(data, np.dtype("int16"), shape, "operand") for shape in shapes]
    expected, error = call_numpy(np.einsum, [subscripts, *operands], {})
    assert error is None, error
    assert_matches(linalg.einsum(subscripts, *[la.asarray(operand) for operand in operands]), expected)


def test_einsum_size_one_labels_broadcast_and_interleaved_form():
    left, right = np.array([2.0]), np.arange(3.0)
    assert_matches(linalg.einsum("i,i", la.asarray(left), la.asarray(right)), np.einsum("i,i", left, right))
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    assert_matches(
        linalg.einsum(la.asarray(a), [0, 1], la.asarray(b), [1, 2], [0, 2]),
        np.einsum(a, [0, 1], b, [1, 2], [0, 2]),
    )
    assert_matches(
        linalg.einsum("ij,jk", la.asarray(a), la.asarray(b), dtype=np.float64),
        np.einsum("ij,jk", a, b, dtype=np.float64),
    )


@pytest.mark.parametrize(
    "subscripts, shapes, message",
    [
        ("ij,jk", [(2, 3)], "fewer operands provided"),  # NumPy's wording here says "more"
        ("ij", [(2, 3), (3,)], "more operands provided"),
        ("ij->ii", [(2, 2)], "multiple times"),
        ("ij->k", [(2, 2)], "never appeared"),
        ("i", [(2, 2)], "no '...'"),
        ("ijk", [(2, 2)], "too many subscripts"),
        ("i#", [(2, 2)], "subscripts must be letters"),
        ("i,i", [(2,), (3,)], "broadcast"),
        ("ii", [(2, 3)], "don't match"),
        ("i->i->i", [(3,)], "'->'"),
        ("...ii->i", [(2, 3, 3)], "no '...'"),
    ],
)
def test_einsum_errors(subscripts, shapes, message):
    operands = [la.asarray(np.ones(shape)) for shape in shapes]
    with pytest.raises(ValueError, match=message):
        linalg.einsum(subscripts, *operands)
    with pytest.raises(ValueError):
        np.einsum(subscripts, *[np.ones(shape) for shape in shapes])


@pytest.mark.parametrize("keywords, error", [({"casting": "bogus"}, ValueError), ({"dtype": "bogus"}, TypeError)])
def test_a_one_operand_view_einsum_still_checks_dtype_and_casting(keywords, error):
    """NumPy ignores `dtype=` and `casting=` for the view it returns, but refuses bad ones."""
    values = np.ones((2, 3))
    with pytest.raises(error):
        np.einsum("ij->ji", values, **keywords)
    with pytest.raises(error):
        linalg.einsum("ij->ji", la.asarray(values), **keywords)


def test_einsum_casting_error():
    with pytest.raises(TypeError, match="safe"):
        linalg.einsum("i->", la.asarray(np.ones(3)), dtype=np.float32)
