"""NumPy's files, printing and small utilities on lazy arrays, held to NumPy 2.4.

Files written from lazy arrays must be NumPy's byte for byte (.npy; each member of an .npz;
savetxt's text), and what la.load and the text readers return must be lazy arrays equal to
NumPy's results in shape, dtype and values (zero signs and NaNs included). Printing must give
NumPy's strings for the same values, under the same print options. may_share_memory and
shares_memory must give NumPy's answers for the same views (or the conservative True where
lazyarr cannot tell a layout), and the layout functions (asfortranarray, require, isfortran)
NumPy's flags. The error handling functions keep NumPy's settings and refuse 'raise' and
'call' (lazyarr never raises or calls on floating-point errors).

The hypothesis tables run on the interpreter (each example is a new graph); one test saves a
compiled result.
"""

from __future__ import annotations

import doctest
import io
import pickle
import re
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr.frontend import numpy_io
from lazyarr.frontend.views import strided
from tests.assertions import assert_identical
from tests.strategies import ALL_DTYPES, FLOAT_DTYPES, REAL_DTYPES, arrays, shapes

pytestmark = pytest.mark.usefixtures("interpreter_backend_for_module")

INTEGER_DTYPES = [dtype for dtype in REAL_DTYPES if dtype.kind in "iu"]
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
tables = hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4)


def pending(values: np.ndarray) -> la.Array:
    """A lazy array holding `values` bit for bit that is not evaluated yet (a select keeps NaN
    payloads and zero signs, which arithmetic would not)."""
    array = la.asarray(values)
    return la.where(la.asarray(True), array, array)


def npy_bytes(save, value) -> bytes:
    buffer = io.BytesIO()
    save(buffer, value)
    return buffer.getvalue()


def loaded_from(data: bytes, **options):
    return la.load(io.BytesIO(data), **options)


def assert_lazy_identical(got, want):
    assert isinstance(got, la.Array), type(got)
    assert_identical(np.asarray(got), want)


# -- .npy -----------------------------------------------------------------------------------------
VIEWS = {  # a view of the saved array, the same on NumPy and lazy arrays
    "whole": lambda x: x,
    "transposed": lambda x: x.T,  # Fortran order in NumPy's header for 2-d and more
    "strided": lambda x: x[..., ::2],  # neither C nor Fortran contiguous: saved in C order
}


@settings(max_examples=40)
@given(data=st.data())
def test_save_writes_numpys_bytes_and_load_reads_them_back(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    values = data.draw(arrays(dtype, shapes), label="values")
    view = data.draw(st.sampled_from(sorted(VIEWS)), label="view") if values.ndim else "whole"
    want = VIEWS[view](values)
    got = VIEWS[view](pending(values) if view == "whole" else la.asarray(values))
    written = npy_bytes(la.save, got)
    assert written == npy_bytes(np.save, want)
    assert_lazy_identical(loaded_from(written), want)


def test_save_of_a_compiled_result_and_numpys_save_of_a_lazy_array(cpu_backend, tmp_path):
    values = np.linspace(-2, 2, 12).reshape(3, 4)
    result = la.asarray(values) * 3 - 1
    la.save(tmp_path / "lazy", result)  # '.npy' appended, as NumPy does
    np.save(tmp_path / "numpy", values * 3 - 1)
    assert (tmp_path / "lazy.npy").read_bytes() == (tmp_path / "numpy.npy").read_bytes()
    np.save(tmp_path / "dispatched.npy", result.T)  # np.save(lazy) comes to la.save
    np.save(tmp_path / "transposed.npy", (values * 3 - 1).T)
    assert (tmp_path / "dispatched.npy").read_bytes() == (tmp_path / "transposed.npy").read_bytes()
    assert_lazy_identical(la.load(tmp_path / "lazy.npy"), values * 3 - 1)


@pytest.mark.parametrize("values, allow_pickle", [
    (np.array(["ab", "c"]), False),
    (np.array([b"x"]), False),
    (np.array([(1, 2.0)], dtype="i4,f8"), False),
    (np.array(["2020-01-01"], dtype="M8[D]"), False),
    (np.array([1.0], dtype=np.longdouble), False),
    (np.array([1, None], dtype=object), True),
])
def test_load_of_a_dtype_lazyarr_lacks_raises_type_error_naming_it(values, allow_pickle):
    with pytest.raises(TypeError, match=r"load: the data have dtype .*lazyarr arrays do not support") as error:
        loaded_from(npy_bytes(np.save, values), allow_pickle=allow_pickle)
    assert str(values.dtype) in str(error.value)


def test_load_keeps_numpys_pickle_rules_and_objects():
    with pytest.raises(ValueError, match="allow_pickle=False"):
        loaded_from(npy_bytes(np.save, np.array([1, None], dtype=object)))
    pickled = io.BytesIO()
    pickle.dump({"a": [1, 2]}, pickled)
    assert la.load(io.BytesIO(pickled.getvalue()), allow_pickle=True) == {"a": [1, 2]}
    with pytest.raises(ValueError, match="pickled"):
        la.load(io.BytesIO(pickled.getvalue()))


def test_load_of_a_non_native_byte_order_gives_the_native_dtype():
    """Pinned difference: NumPy keeps '>i4'; lazyarr's dtypes are native, the values the same."""
    values = np.array([1, -2, 2**31 - 1], dtype=">i4")
    got = loaded_from(npy_bytes(np.save, values))
    assert got.dtype == np.dtype("int32") and got.dtype.isnative
    assert np.asarray(got).tolist() == values.tolist()


def test_load_with_mmap_mode_copies_the_values_and_refuses_writing_maps(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.arange(4.0))
    before = path.read_bytes()
    for mode in ("r", "c"):
        array = la.load(path, mmap_mode=mode)
        assert type(np.asarray(array)) is np.ndarray
        array[0] = 99.0  # a lazy array's write: never reaches the file
        assert path.read_bytes() == before
    array = la.load(path, mmap_mode="r")
    np.save(path, np.zeros(4))  # the file changes afterwards: the array keeps its copy
    assert np.asarray(array).tolist() == [0.0, 1.0, 2.0, 3.0]
    for mode in ("r+", "w+"):
        np.save(path, np.arange(4.0))
        with pytest.raises(NotImplementedError, match=re.escape(f"mmap_mode='{mode}'")):
            la.load(path, mmap_mode=mode)
        assert path.read_bytes() == before  # refused before the file is opened


# -- .npz -----------------------------------------------------------------------------------------
def _members(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: (info.compress_type, archive.read(info)) for info in archive.infolist()}


@settings(max_examples=15)
@given(data=st.data(), compressed=st.booleans())
def test_savez_members_are_numpys_and_load_reads_them_lazily(data, compressed):
    first = data.draw(arrays(data.draw(st.sampled_from(ALL_DTYPES), label="dtype0"), small_shapes), label="first")
    second = data.draw(arrays(data.draw(st.sampled_from(ALL_DTYPES), label="dtype1"), small_shapes), label="second")
    save = la.savez_compressed if compressed else la.savez
    numpy_save = np.savez_compressed if compressed else np.savez
    lazy_file, numpy_file = io.BytesIO(), io.BytesIO()
    save(lazy_file, pending(first), named=pending(second))
    numpy_save(numpy_file, first, named=second)
    assert _members(lazy_file.getvalue()) == _members(numpy_file.getvalue())  # (zip dates may differ)
    lazy_file.seek(0)
    with la.load(lazy_file) as archive:
        assert archive.files == ["named", "arr_0"] == np.load(io.BytesIO(numpy_file.getvalue())).files
        assert_lazy_identical(archive["arr_0"], first)
        assert_lazy_identical(archive["named.npy"], second)
        assert_lazy_identical(archive.f.named, second)


def test_npz_archive_behaves_as_numpys(tmp_path):
    path = tmp_path / "data.npz"
    la.savez(path, la.arange(3), weights=la.ones((2, 2), dtype="float32"))
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("notes.txt", b"not an array")
    numpy_archive = np.load(path)
    archive = la.load(path)
    assert isinstance(archive, numpy_io.file_io.NpzFile)
    assert archive.files == numpy_archive.files == list(archive) == list(archive.keys())
    assert len(archive) == 3 and "weights" in archive and "weights.npy" in archive and "nope" not in archive
    assert repr(archive) == repr(numpy_archive)
    assert archive["notes.txt"] == numpy_archive["notes.txt"] == b"not an array"  # NumPy gives the bytes
    assert_lazy_identical(archive.get("weights"), numpy_archive["weights"])
    assert archive.get("nope") is None
    with pytest.raises(KeyError, match="nope is not a file in the archive"):
        archive["nope"]
    with pytest.raises(AttributeError):
        archive.f.nope
    assert sorted(dir(archive.f)) == sorted(archive.files)
    values = dict(archive.items())
    assert_lazy_identical(values["arr_0"], np.arange(3))
    numpy_archive.close()
    with archive as entered:
        assert entered is archive
    with pytest.raises(ValueError, match="closed"):
        archive["arr_0"]


def test_savez_names_and_errors_are_numpys(tmp_path):
    with pytest.raises(ValueError, match="arr_0"):
        la.savez(tmp_path / "x.npz", la.zeros(1), arr_0=la.zeros(1))
    objects = np.array([None], dtype=object)
    with pytest.raises(ValueError, match="allow_pickle=False"):
        la.savez(tmp_path / "y.npz", objects, allow_pickle=False)
    la.save(tmp_path / "z.npy", objects)  # NumPy's arguments pass through: objects pickle
    with pytest.raises(TypeError, match="dtype object"):
        la.load(tmp_path / "z.npy", allow_pickle=True)


# -- text and buffers -----------------------------------------------------------------------------
@settings(max_examples=25)
@given(data=st.data())
def test_savetxt_writes_numpys_text_and_loadtxt_reads_numpys_result(data):
    dtype = data.draw(st.sampled_from([np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64),
                                       np.dtype(np.uint8), np.dtype(np.bool_)]), label="dtype")
    values = data.draw(arrays(dtype, tables), label="values")
    fmt = data.draw(st.sampled_from(["%.18e", "%g", "%r"]), label="fmt")
    want, got = io.StringIO(), io.StringIO()
    np.savetxt(want, values, fmt=fmt, delimiter=",", header="h", footer="f")
    la.savetxt(got, pending(values), fmt=fmt, delimiter=",", header="h", footer="f")
    assert got.getvalue() == want.getvalue()
    if dtype.kind == "f" and fmt != "%r":  # (%r writes NumPy's reprs: "np.float64(0.0)")
        text = want.getvalue()
        read_as = data.draw(st.sampled_from([dtype, np.dtype(np.float64)]), label="read as")
        expected = np.loadtxt(io.StringIO(text), dtype=read_as, delimiter=",", ndmin=2)
        assert_lazy_identical(la.loadtxt(io.StringIO(text), dtype=read_as, delimiter=",", ndmin=2), expected)


def test_savetxt_errors_are_numpys():
    with pytest.raises(ValueError, match="Expected 1D or 2D array, got 0D array instead"):
        la.savetxt(io.StringIO(), la.asarray(1.0))


def test_loadtxt_unpack_and_structured_dtypes():
    text = "1 2.5\n3 4\n"
    assert_lazy_identical(la.loadtxt(io.StringIO(text), unpack=True), np.loadtxt(io.StringIO(text), unpack=True))
    fields = [("a", "i4"), ("b", "f4")]
    got = la.loadtxt(io.StringIO(text), dtype=fields, unpack=True)
    want = np.loadtxt(io.StringIO(text), dtype=fields, unpack=True)
    assert isinstance(got, list) and len(got) == 2
    for got_field, want_field in zip(got, want):
        assert_lazy_identical(got_field, want_field)
    with pytest.raises(TypeError, match=r"dtype \[\('a', '<i4'\), \('b', '<f4'\)\].*convert each field"):
        la.loadtxt(io.StringIO(text), dtype=fields)
    with pytest.raises(ValueError):
        la.loadtxt(io.StringIO("1 x\n"))  # NumPy's parse error


def test_genfromtxt_fills_as_numpy_and_refuses_masks():
    text = "# c\n1,2,3\n4,,6\n7,8,\n"
    for options in ({}, {"filling_values": -1}, {"skip_header": 2}, {"usecols": (0, 2)}, {"dtype": "int32"}):
        want = np.genfromtxt(io.StringIO(text), delimiter=",", **options)
        assert_lazy_identical(la.genfromtxt(io.StringIO(text), delimiter=",", **options), want)
    with pytest.raises(NotImplementedError, match="masked array"):
        la.genfromtxt(io.StringIO(text), delimiter=",", usemask=True)
    with pytest.raises(TypeError, match="convert each field"):
        la.genfromtxt(io.StringIO("a,b\n1,2\n"), delimiter=",", names=True)


def test_fromregex_results_are_structured():
    with pytest.raises(TypeError, match=r"fromregex: the data have dtype \[\('x', '<f8'\)\]"):
        la.fromregex(io.StringIO("x=1.5\nx=2\n"), r"x=(\S+)", [("x", "f8")])
    with pytest.raises(TypeError, match="structured"):  # NumPy's own error first
        la.fromregex(io.StringIO("1"), r"(\d)", np.float64)


def test_fromfile_frombuffer_fromstring_match_numpy(tmp_path):
    values = np.array([1.5, -0.0, np.nan, np.inf], dtype=np.float32)
    path = tmp_path / "raw.bin"
    values.tofile(path)
    for options in ({"dtype": np.float32}, {"dtype": np.float32, "count": 2, "offset": 4}, {"dtype": np.uint8}):
        assert_lazy_identical(la.fromfile(path, **options), np.fromfile(path, **options))
    (tmp_path / "text.txt").write_text("1, 2, 3")
    assert_lazy_identical(la.fromfile(tmp_path / "text.txt", dtype=np.int64, sep=","),
                          np.fromfile(tmp_path / "text.txt", dtype=np.int64, sep=","))
    raw = values.tobytes()
    for options in ({"dtype": np.float32}, {"dtype": np.int16, "count": 3, "offset": 2}):
        assert_lazy_identical(la.frombuffer(raw, **options), np.frombuffer(raw, **options))
    # a lazy array as the buffer: its values' bytes, where NumPy's array is C-contiguous
    matrix_values = np.arange(6, dtype=np.int16).reshape(2, 3)
    matrix = la.asarray(matrix_values)
    contiguous = ((matrix, matrix_values), (matrix[1], matrix_values[1]), (matrix + 1, matrix_values + 1))
    for got_view, want_view in contiguous:
        assert_lazy_identical(la.frombuffer(got_view, dtype=np.int8), np.frombuffer(want_view, np.int8))
    for got_view, want_view in ((matrix.T, matrix_values.T), (matrix[:, ::2], matrix_values[:, ::2])):
        with pytest.raises(ValueError, match="not C-contiguous"):
            np.frombuffer(want_view, np.int8)
        with pytest.raises(ValueError, match="not C-contiguous"):
            la.frombuffer(got_view, dtype=np.int8)
    writable = bytearray(raw)
    copied = la.frombuffer(writable, dtype=np.float32)
    writable[:4] = bytes(4)  # a copy, unlike NumPy's view: later changes to the buffer do not show
    assert np.asarray(copied)[0] == 1.5
    with pytest.raises(ValueError, match="buffer size must be a multiple of element size"):
        la.frombuffer(b"\x00" * 3, dtype=np.float32)
    assert_lazy_identical(la.fromstring("1 2 3", dtype=np.int32, sep=" "), np.fromstring("1 2 3", np.int32, sep=" "))
    with pytest.raises(ValueError, match="binary mode of fromstring is removed"):
        la.fromstring(b"\x01\x02", dtype=np.int8)


def test_like_is_checked_as_numpy_and_numpys_dispatch_reaches_lazyarr():
    prototype = la.zeros(1)
    got = np.loadtxt(io.StringIO("1 2"), like=prototype)  # NumPy hands the call to la.loadtxt
    assert_lazy_identical(got, np.array([1.0, 2.0]))
    assert_lazy_identical(la.frombuffer(b"\x01", dtype=np.uint8, like=np.zeros(1)), np.array([1], np.uint8))
    for function, argument in ((la.loadtxt, io.StringIO("1")), (la.fromstring, "1"), (la.asfortranarray, [1]),
                               (la.require, [1])):
        with pytest.raises(TypeError, match="The `like` argument must be an array-like"):
            function(argument, like=3)


# -- printing -------------------------------------------------------------------------------------
print_options = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 10),
    "threshold": st.integers(0, 20),
    "edgeitems": st.integers(1, 3),
    "linewidth": st.integers(10, 100),
    "suppress": st.booleans(),
    "sign": st.sampled_from(["-", "+", " "]),
    "floatmode": st.sampled_from(["fixed", "unique", "maxprec", "maxprec_equal"]),
})


@settings(max_examples=40)
@given(data=st.data(), options=print_options)
def test_printing_gives_numpys_text_under_numpys_print_options(data, options):
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    values = data.draw(arrays(dtype, small_shapes), label="values")
    array = pending(values)
    with la.printoptions(**options):
        assert la.get_printoptions() == np.get_printoptions()
        assert la.array_repr(array) == np.array_repr(values)
        assert la.array_str(array) == np.array_str(values)
        assert la.array2string(array, separator=", ") == np.array2string(values, separator=", ")
        assert la.array2string(array, precision=3, prefix="x = ") == np.array2string(values, precision=3,
                                                                                      prefix="x = ")
        assert repr(array) == "Array" + np.array_repr(values)[len("array"):]  # lazyarr's repr follows the options
        assert str(array) == str(values)
        assert np.array2string(array) == np.array2string(values)  # NumPy's call dispatches here


def test_print_options_are_numpys_own_state():
    assert la.set_printoptions is np.set_printoptions and la.printoptions is np.printoptions
    before = np.get_printoptions()
    try:
        la.set_printoptions(precision=3)
        assert np.get_printoptions()["precision"] == 3
        assert repr(la.asarray([1 / 3])) == "Array([0.333])"
    finally:
        np.set_printoptions(**before)
    assert la.get_printoptions() == before
    with pytest.raises(AttributeError):  # as NumPy's, for a list
        la.array_repr([la.asarray(1.0), la.asarray(2.0)])
    formatter = {"float": lambda value: f"<{value:.1f}>"}
    assert la.array2string(la.asarray([1.25]), formatter=formatter) == "[<1.2>]"


float_options = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 20), "unique": st.booleans(), "trim": st.sampled_from("k.0-"),
    "sign": st.booleans(), "pad_left": st.integers(0, 5), "min_digits": st.integers(0, 5),
})


@settings(max_examples=40)
@given(data=st.data(), options=float_options, scientific=st.booleans())
def test_format_float_matches_numpy_for_the_scalar_of_a_0d_array(data, options, scientific):
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES), label="dtype")
    value = data.draw(arrays(dtype, st.just(())), label="value")
    if not options.get("unique", True) and "precision" not in options:
        options["precision"] = 3  # NumPy requires a precision when unique=False
    ours, numpys = ((la.format_float_scientific, np.format_float_scientific) if scientific
                    else (la.format_float_positional, np.format_float_positional))
    assert _outcome(lambda: ours(pending(value), **options)) == _outcome(lambda: numpys(value[()], **options))
    assert _outcome(lambda: ours(float(value), **options)) == _outcome(lambda: numpys(float(value), **options))


def test_format_float_errors_are_numpys():
    with pytest.raises(TypeError):
        la.format_float_positional(la.asarray([1.0, 2.0]))
    with pytest.raises(ValueError, match="precision must be >= 0"):
        la.format_float_scientific(la.asarray(1.0), precision=-1)


@settings(max_examples=30)
@given(data=st.data())
def test_binary_and_base_repr_match_numpy(data):
    dtype = data.draw(st.sampled_from(INTEGER_DTYPES), label="dtype")
    value = data.draw(arrays(dtype, st.just(())), label="value")
    width = data.draw(st.none() | st.integers(1, 70), label="width")
    base = data.draw(st.integers(2, 36), label="base")
    padding = data.draw(st.integers(0, 3), label="padding")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's DeprecationWarning for a too small width: both or neither
        want_binary = _outcome(lambda: np.binary_repr(value[()], width))
        assert _outcome(lambda: la.binary_repr(pending(value), width)) == want_binary
    assert la.base_repr(pending(value), base, padding) == np.base_repr(value[()], base, padding)
    with pytest.raises(ValueError, match="Bases greater than 36 not handled"):
        la.base_repr(la.asarray(1), 37)


def _outcome(function):
    try:
        return function()
    except (ValueError, DeprecationWarning) as error:
        return type(error)


# -- small utilities ------------------------------------------------------------------------------
@settings(max_examples=30)
@given(data=st.data())
def test_asarray_chkfinite_raises_where_numpy_does(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    values = data.draw(arrays(dtype, small_shapes), label="values")
    try:
        want = np.asarray_chkfinite(values)
    except ValueError:
        with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
            la.asarray_chkfinite(pending(values))
        return
    array = pending(values)
    got = la.asarray_chkfinite(array)
    assert got is array  # the same lazy array (evaluated), as NumPy returns its input
    assert_lazy_identical(got, want)
    assert_lazy_identical(la.asarray_chkfinite(values, dtype=dtype), want)


def _view_of(xp, base, kind):
    if kind == "transposed":
        return xp.transpose(base)
    if kind == "strided":
        return base[..., ::2] if base.ndim else base
    if kind == "broadcast":
        return xp.broadcast_to(base, (2,) + base.shape)  # read-only
    if kind == "diagonal":
        return xp.diagonal(base) if base.ndim >= 2 else base
    return base


LAYOUT_CALLS = {
    "asfortranarray": lambda xp, x: xp.asfortranarray(x),
    "asfortranarray float32": lambda xp, x: xp.asfortranarray(x, dtype=np.float32),
    "ascontiguousarray": lambda xp, x: xp.ascontiguousarray(x),
    "require": lambda xp, x: xp.require(x),
    "require C": lambda xp, x: xp.require(x, requirements="C"),
    "require F": lambda xp, x: xp.require(x, requirements=["F_CONTIGUOUS"]),
    "require FW": lambda xp, x: xp.require(x, requirements="FW"),
    "require W": lambda xp, x: xp.require(x, requirements="w"),
    "require AE": lambda xp, x: xp.require(x, requirements=["ALIGNED", "E"]),
    "require CO": lambda xp, x: xp.require(x, requirements="CO"),
}


@settings(max_examples=60)
@given(shape=small_shapes, view=st.sampled_from(["whole", "transposed", "strided", "broadcast", "diagonal"]),
       call=st.sampled_from(sorted(LAYOUT_CALLS)))
def test_layout_functions_give_numpys_flags_and_view_or_copy(shape, view, call):
    base_values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).copy()  # owns its data
    base = la.asarray(base_values)
    want_input, got_input = _view_of(np, base_values, view), _view_of(la, base, view)
    assert la.isfortran(got_input) == np.isfortran(want_input)
    want = LAYOUT_CALLS[call](np, want_input)
    got = LAYOUT_CALLS[call](la, got_input)
    assert_lazy_identical(got, want)
    assert la.isfortran(got) == np.isfortran(want)
    assert (got is got_input) == (want is want_input)
    assert la.shares_memory(got, base) == np.shares_memory(want, base_values)
    if want.flags.writeable and want.size:  # a write reaches the base exactly where NumPy's does
        got[...] = -1
        want[...] = -1
        assert_lazy_identical(base, base_values)
    if want.ndim >= 2 and want.size:  # reshape of the result: a view or a copy as NumPy's
        assert la.shares_memory(got.reshape(-1), got) == np.shares_memory(want.reshape(-1), want)


def test_layout_function_errors_are_numpys():
    with pytest.raises(ValueError, match='Cannot specify both "C" and "F" order'):
        la.require(la.zeros(2), requirements="CF")
    with pytest.raises(KeyError):
        la.require(la.zeros(2), requirements="X")
    assert la.asfortranarray(la.asarray(5.0)).shape == np.asfortranarray(np.float64(5.0)).shape == (1,)
    assert la.require(la.asarray(5.0), requirements="F").shape == ()
    with pytest.raises(AttributeError):
        la.isfortran([1, 2])  # as NumPy: isfortran wants an array
    assert la.isfortran(np.asfortranarray(np.zeros((2, 2)))) is True


def _chain(data, want_base, got_base):
    """A random chain of view-making steps applied to NumPy's array and to the lazy one (each
    step's result on both), starting from the given bases."""
    want, got = [want_base], [got_base]
    for _ in range(data.draw(st.integers(1, 3), label="steps")):
        shape = want[-1].shape
        kinds = ["index", "transpose", "reshape", "real", "imag", "broadcast_to"]
        kinds += ["flip", "diagonal"] if len(shape) >= 2 else []
        kind = data.draw(st.sampled_from(kinds), label="kind")
        if kind == "index":
            key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True), label="key")
            step = lambda xp, x, key=key: x[key]  # noqa: E731
        elif kind == "transpose":
            axes = tuple(data.draw(st.permutations(range(len(shape))), label="axes"))
            step = lambda xp, x, axes=axes: xp.transpose(x, axes)  # noqa: E731
        elif kind == "reshape":
            step = lambda xp, x: xp.reshape(x, (-1,))  # noqa: E731  (a view or a copy)
        elif kind in ("real", "imag"):
            step = lambda xp, x, kind=kind: getattr(xp, kind)(x)  # noqa: E731
        elif kind == "broadcast_to":
            step = lambda xp, x: xp.broadcast_to(x, (2,) + x.shape)  # noqa: E731
        elif kind == "flip":
            step = lambda xp, x: xp.flip(x, 0)  # noqa: E731
        else:
            step = lambda xp, x: xp.diagonal(x)  # noqa: E731
        want_next = step(np, want[-1])
        if not isinstance(want_next, np.ndarray):
            break
        want.append(want_next)
        got.append(step(la, got[-1]))
    return want, got


@settings(max_examples=60)
@given(data=st.data(), complex_values=st.booleans())
def test_memory_sharing_answers_numpys_for_the_same_views(data, complex_values):
    """Two chains of views from one base: every pair (within and across the chains) gets
    NumPy's answer, or True where lazyarr cannot tell a layout (the conservative answer)."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), label="shape")
    base_values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if complex_values:
        base_values = base_values + 1j * base_values
    base = la.asarray(base_values)
    want, got = _chain(data, base_values, base)
    want_other, got_other = _chain(data, base_values, base)
    want, got = want + want_other[1:], got + got_other[1:]
    others = la.asarray(base_values), la.asarray(base_values) + 0  # other owners: never shared
    for index, (got_array, want_array) in enumerate(zip(got, want)):
        for other_index in range(index + 1):
            known = all(isinstance(strided(array), np.ndarray) for array in (got_array, got[other_index]))
            for ours, numpys in ((la.shares_memory, np.shares_memory), (la.may_share_memory, np.may_share_memory)):
                answer = ours(got_array, got[other_index])
                assert answer == ours(got[other_index], got_array)
                expected = numpys(want_array, want[other_index])
                assert answer == expected or (not known and answer and want_array.size)
        for other in others:
            assert not la.shares_memory(got_array, other) and not la.may_share_memory(other, got_array)
        assert not la.shares_memory(got_array, want_array)  # a NumPy array never shares with a lazy one
        assert np.shares_memory(got_array, got[0]) == la.shares_memory(got_array, got[0])  # NumPy dispatches


def test_memory_sharing_of_numpy_arrays_and_max_work_are_numpys():
    values = np.arange(12)
    assert la.shares_memory(values[::2], values[1::2]) is False
    assert la.may_share_memory(values[::2], values[1::2]) is True
    assert la.may_share_memory([1, 2], [1, 2]) is False
    lazy = la.asarray(values)
    assert la.may_share_memory(lazy[::2], lazy[1::2]) is True  # NumPy's bounds check, by default
    assert la.may_share_memory(lazy[::2], lazy[1::2], max_work=-1) is False  # its exact answer
    assert la.shares_memory(lazy[:0], lazy) is False
    assert la.shares_memory(lazy, lazy) is True
    assert la.shares_memory(lazy, np.asarray(lazy)) is False  # a snapshot that lazy writes do not change
    box_values = np.zeros((7, 11, 13))
    box = la.asarray(box_values)
    with pytest.raises(np.exceptions.TooHardError):  # NumPy gives up past max_work: so does lazyarr
        np.shares_memory(box_values[:, :, ::2], box_values[1:, 1::2], max_work=1)
    with pytest.raises(np.exceptions.TooHardError):
        la.shares_memory(box[:, :, ::2], box[1:, 1::2], max_work=1)
    assert la.shares_memory(box[:, :, ::2], box[1:, 1::2]) == np.shares_memory(box_values[:, :, ::2],
                                                                               box_values[1:, 1::2])


def test_iteration_helpers_are_numpys():
    values = np.array([[1.5, -0.0], [np.nan, 2.0]])
    array = pending(values)
    assert la.ndindex is np.ndindex and la.ndenumerate is np.ndenumerate and la.iterable is np.iterable
    got, want = list(la.ndenumerate(array)), list(np.ndenumerate(values))
    assert [index for index, _ in got] == [index for index, _ in want]
    assert_identical(np.array([value for _, value in got]), np.array([value for _, value in want]))
    assert type(got[0][1]) is np.float64
    assert list(la.ndenumerate(la.asarray(3))) == [((), 3)]
    assert list(la.ndindex(2, 1)) == list(np.ndindex((2, 1)))
    assert la.iterable(array) and not la.iterable(la.asarray(1.0)) and not la.iterable(3)
    assert la.typename("d") == np.typename("d") == "double precision"


# -- floating-point error handling ----------------------------------------------------------------
def test_error_handling_is_numpys_state_and_lazyarr_stays_silent():
    before = np.geterr()
    assert la.geterr() == before
    try:
        old = la.seterr(divide="ignore", over="print", invalid="log")
        assert old == before
        assert np.geterr() == {"divide": "ignore", "over": "print", "under": "ignore", "invalid": "log"}
        assert la.geterr() == np.geterr()
        with pytest.raises(ValueError, match="invalid error mode 'bogus'"):
            la.seterr(under="bogus")
    finally:
        np.seterr(**before)
    numbers = np.array([1.0, 0.0, 1e308])
    with np.errstate(all="ignore"):
        expected = np.concatenate([numbers / 0.0, numbers * 1e10])
    with la.errstate(divide="warn", invalid="warn", over="warn"), warnings.catch_warnings():
        warnings.simplefilter("error")  # lazyarr computes silently, under every informational mode
        assert la.geterr()["divide"] == "warn"
        values = la.asarray(numbers)
        assert_identical(np.asarray(la.concatenate([values / 0.0, values * 1e10])), expected)
    assert np.geterr() == before


@pytest.mark.parametrize("mode", ["raise", "call"])
def test_error_modes_that_change_control_flow_are_refused(mode):
    before = np.geterr()
    for settings_call in (lambda: la.seterr(all=mode), lambda: la.seterr(invalid=mode),
                          lambda: la.errstate(divide=mode), lambda: la.errstate(all=mode, under="ignore")):
        with pytest.raises(NotImplementedError, match=f"={mode!r} is not supported: lazyarr .* never raises"):
            settings_call()
        assert np.geterr() == before  # nothing was changed


def test_errstate_as_context_manager_decorator_and_handler():
    before = np.geterr()
    state = la.errstate(all="ignore")
    with state as entered:
        assert entered is None and np.geterr() == dict.fromkeys(before, "ignore")
        with pytest.raises(TypeError, match="Cannot enter `errstate` twice"):
            state.__enter__()
    assert np.geterr() == before
    with state:  # reusable after exit, as NumPy's
        assert np.geterr()["over"] == "ignore"

    @la.errstate(over="ignore")
    def depth(level):
        return np.geterr()["over"] if level == 0 else depth(level - 1)

    assert depth(3) == "ignore" and np.geterr() == before

    class Log:
        def write(self, message):
            pass

    handler = Log()
    previous = la.seterrcall(handler)
    try:
        assert la.geterrcall() is handler is np.geterrcall()
    finally:
        la.seterrcall(previous)
    with la.errstate(call=handler, invalid="log"):
        assert np.geterrcall() is handler
    assert np.geterrcall() is previous


# -- configuration, names, docstrings -------------------------------------------------------------
def test_show_config(capsys):
    config = la.show_config(mode="dicts")
    assert set(config) == {"lazyarr", "NumPy"} and config["NumPy"] == np.show_config(mode="dicts")
    assert config["lazyarr"]["version"] == la.__version__
    assert config["lazyarr"]["backend"] == la.get_backend_name()
    assert config["lazyarr"]["dependencies"]["numpy"] == np.__version__
    assert la.show_config() is None
    printed = capsys.readouterr().out
    assert printed.startswith("lazyarr:\n  version: ") and "NumPy:" in printed
    with pytest.raises(AttributeError, match="Invalid `mode`, use one of: stdout, dicts"):
        la.show_config(mode="yaml")


NAMES = """save savez savez_compressed load savetxt loadtxt genfromtxt fromfile frombuffer fromstring fromregex
array2string array_repr array_str set_printoptions get_printoptions printoptions format_float_positional
format_float_scientific asarray_chkfinite asfortranarray require isfortran may_share_memory shares_memory
iterable ndenumerate ndindex base_repr binary_repr typename errstate seterr geterr seterrcall geterrcall
show_config""".split()


def test_names_are_at_top_level_and_gathered():
    assert set(NAMES) == set(numpy_io.__all__)
    for name in NAMES:
        assert getattr(la, name) is getattr(numpy_io, name), name


def test_docstring_examples():
    for module in numpy_io.MODULES:
        assert doctest.testmod(module).failed == 0, module.__name__
