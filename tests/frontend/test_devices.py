"""The device model without a GPU: a test device plugged in through the public interface.

"testdev" is a third device as a plug-in would add one: a TransferManager whose buffers are
`DeviceBuffer`s (a NumPy array inside an object that is not one, so nothing can read it by
accident as a host array), and a backend that unwraps them, runs the interpreter's executable
and wraps the results. Everything above the backend layer (placement, `.device`, transfers,
evaluation, jit) must then work for it exactly as for the GPU. A few GPU tests at the end run
where CuPy finds a GPU.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import _flags, backends
from lazyarr import compile as compile_driver
from lazyarr.backends import base as backends_base
from lazyarr.frontend.array import bound_buffer
from tests.assertions import assert_identical
from tests.strategies import ALL_DTYPES, FLOAT_DTYPES, arrays, shapes

DEVICE = "testdev"
BACKEND = "testdev_backend"


class DeviceBuffer:
    """A buffer on the test device. Counts DLPack calls, to show that lazyarr delegates them."""

    dlpack_calls = {"__dlpack__": 0, "__dlpack_device__": 0}

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def shape(self):
        return self.array.shape

    @property
    def dtype(self):
        return self.array.dtype

    def __dlpack__(self, **kwargs):
        DeviceBuffer.dlpack_calls["__dlpack__"] += 1
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        DeviceBuffer.dlpack_calls["__dlpack_device__"] += 1
        return self.array.__dlpack_device__()  # the test device's memory is host memory


class DeviceTransfers:
    device = DEVICE

    def __init__(self):
        self.to_host_calls = 0
        self.from_host_calls = 0

    def owns(self, buffer) -> bool:
        return isinstance(buffer, DeviceBuffer)

    def to_host(self, buffer: DeviceBuffer) -> np.ndarray:
        self.to_host_calls += 1
        return buffer.array.copy()

    def from_host(self, array: np.ndarray) -> DeviceBuffer:
        self.from_host_calls += 1
        return DeviceBuffer(np.array(array, copy=True, order="C"))

    def copy(self, buffer: DeviceBuffer) -> DeviceBuffer:
        return DeviceBuffer(np.array(buffer.array, copy=True, order="C"))

    def contiguous_view(self, buffer: DeviceBuffer, key) -> DeviceBuffer | None:
        view = buffer.array[key]
        return DeviceBuffer(view) if isinstance(view, np.ndarray) and view.flags.c_contiguous else None


class DeviceExecutable:
    """The interpreter's executable, on test-device buffers (host 0-d arrays are accepted too,
    as every device accepts lifted scalars). A host array of rank >= 1 is a bug above."""

    def __init__(self, inner, backend):
        self.inner, self.backend = inner, backend

    def run(self, arguments):
        unwrapped = []
        for argument in arguments:
            if isinstance(argument, DeviceBuffer):
                unwrapped.append(argument.array)
            elif isinstance(argument, np.ndarray) and argument.ndim == 0:
                unwrapped.append(argument)
            else:
                raise TypeError(f"{BACKEND} got a {type(argument).__name__} of shape {np.shape(argument)}")
        self.backend.runs += 1
        return [DeviceBuffer(np.asarray(result)) for result in self.inner.run(unwrapped)]


class DeviceBackend:
    name = BACKEND
    device = DEVICE

    def __init__(self):
        self.runs = 0

    def compile(self, module, pipeline_dump=None):
        return DeviceExecutable(backends.get_backend("interpreter").compile(module), self)


# One instance each for the whole file: the compile cache keeps executables by backend name.
TRANSFERS = DeviceTransfers()
DEVICE_BACKEND = DeviceBackend()


@pytest.fixture(autouse=True)
def test_device(monkeypatch):
    """Register the test device and its backend; afterwards the registries are as before
    (monkeypatch swaps in copies of them, and puts the originals back)."""
    monkeypatch.setattr(backends_base, "_TRANSFERS", dict(backends_base._TRANSFERS))
    monkeypatch.setattr(backends_base, "_LOADED", dict(backends_base._LOADED))
    monkeypatch.setattr(backends_base, "_BACKEND_MODULES", dict(backends_base._BACKEND_MODULES))
    monkeypatch.setattr(compile_driver, "_DEVICE_BACKENDS", dict(compile_driver._DEVICE_BACKENDS))
    monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)  # tests may switch the default backend
    backends.register_device(DEVICE, TRANSFERS)
    backends.register_backend(BACKEND, DEVICE_BACKEND)
    compile_driver.register_device_backend(DEVICE, BACKEND)
    DEVICE_BACKEND.runs = 0
    TRANSFERS.to_host_calls = TRANSFERS.from_host_calls = 0
    yield


def on_device(values) -> la.Array:
    return la.asarray(values, device=DEVICE)


def held_on_device(array: la.Array) -> np.ndarray:
    """The NumPy array inside `array`'s test-device buffer (array must be evaluated)."""
    buffer = bound_buffer(array._node)
    assert isinstance(buffer, DeviceBuffer), type(buffer)
    return buffer.array


# -- transfers -----------------------------------------------------------------------------------
@given(st.sampled_from(ALL_DTYPES).flatmap(arrays))
def test_values_round_trip_through_the_device(values):
    host = la.asarray(values)
    moved = host.to_device(DEVICE)
    assert moved.device == DEVICE
    assert_identical(held_on_device(moved), values)
    back = moved.to_device("cpu")
    assert back.device == "cpu"
    assert isinstance(bound_buffer(back._node), np.ndarray)
    assert_identical(np.asarray(back), values)
    assert_identical(moved.numpy(), values)  # numpy() copies to the host
    assert_identical(np.asarray(la.asarray(values, device=DEVICE)), values)


def test_to_device_of_the_same_device_is_the_array_itself():
    x = on_device([1.0, 2.0])
    assert x.to_device(DEVICE) is x
    y = la.asarray([1.0])
    assert y.to_device("cpu") is y
    assert y.to_device(None) is y


def test_device_values_reach_the_host_read_only_through_the_transfer_manager():
    x = on_device(np.arange(4.0))
    value = x.numpy()
    assert TRANSFERS.to_host_calls == 1
    assert not value.flags.writeable  # as host arrays' values: the buffer is never written
    np.testing.assert_array_equal(np.array(x, dtype=np.float32), np.arange(4.0, dtype=np.float32))
    assert float(x[3]) == 3.0
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_asarray_keeps_a_device_buffer_on_its_device_as_a_private_copy():
    original = DeviceBuffer(np.array([1.0, 2.0, 3.0]))
    x = la.asarray(original)
    assert x.device == DEVICE
    assert bound_buffer(x._node) is not original
    original.array[0] = 100.0  # the caller's buffer changes; the lazy array must not
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    assert_identical(la.asarray(original, dtype=np.int32).numpy(), np.array([100, 2, 3], np.int32))
    assert la.asarray(original, dtype=np.int32).device == DEVICE
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        la.asarray(original, dtype=np.int32, copy=False)
    on_host = la.asarray(original, device="cpu")
    assert isinstance(bound_buffer(on_host._node), np.ndarray)
    np.testing.assert_array_equal(on_host.numpy(), [100.0, 2.0, 3.0])
    assert la.from_dlpack(original).device == DEVICE


def test_unsupported_dtype_in_a_device_buffer_is_refused():
    with pytest.raises(TypeError, match="not supported"):
        la.asarray(DeviceBuffer(np.array(["a"])))


# -- evaluation on the device --------------------------------------------------------------------
@given(st.sampled_from(FLOAT_DTYPES).flatmap(lambda dtype: arrays(dtype, shapes, allow_edge=False)))
def test_evaluation_on_the_device_matches_numpy_and_stays_there(values):
    runs = DEVICE_BACKEND.runs
    x = on_device(values)
    result = la.exp(x) * 2 - x
    total = x.sum(axis=0) if x.ndim else x.sum()
    assert result.device == DEVICE and not result.is_evaluated  # .device never evaluates
    la.eval(result, total)
    assert DEVICE_BACKEND.runs == runs + 1  # one module for both, run by the device's backend
    with np.errstate(all="ignore"):
        want = np.exp(values) * values.dtype.type(2) - values
        want_total = values.sum(axis=0) if values.ndim else values.sum()
    # The interpreter is NumPy itself: elementwise results are NumPy's bits.
    assert_identical(held_on_device(result), want)
    assert_identical(held_on_device(total), want_total)
    assert result.device == DEVICE and total.device == DEVICE


def test_device_reports_where_the_graph_reads_without_evaluating():
    x = on_device([1.0, 2.0])
    lazy = (x * 3).reshape(2, 1).T
    assert lazy.device == DEVICE
    assert not lazy.is_evaluated
    assert la.asarray([1.0, 2.0]).device == "cpu"
    assert (la.asarray([1.0]) + 1).device == "cpu"
    assert la.zeros(3).device == "cpu"  # no buffers: the default device
    assert (la.asarray(2.0) * 2).device == "cpu"  # only host 0-d buffers: the default device


@given(st.sampled_from(ALL_DTYPES).flatmap(lambda dtype: arrays(dtype, shapes, allow_edge=False)).filter(
    lambda values: values.ndim >= 1), st.data())
def test_slices_of_an_evaluated_device_array_are_numpys(values, data):
    """A basic key of an evaluated device array reads NumPy's elements; where NumPy's view is
    contiguous, the result is the device's view of the buffer (its memory, nothing computed)."""
    from hypothesis.extra import numpy as hnp

    key = data.draw(hnp.basic_indices(values.shape, min_dims=1, allow_newaxis=True))
    x = on_device(values)
    runs = DEVICE_BACKEND.runs
    got = x[key]
    want = values[key]
    if want.flags.c_contiguous:
        assert got.is_evaluated and DEVICE_BACKEND.runs == runs
        assert np.shares_memory(held_on_device(got), held_on_device(x)) or not want.size
    assert got.device == DEVICE
    assert_identical(np.asarray(got), want)


def test_a_loop_over_row_blocks_of_a_device_array_compiles_one_step():
    """`inputs[rows]` of an evaluated device array is a view: its offset is data, so a jitted
    step fed each block compiles once (it compiled a slice per block: 11 modules for the MLP's
    10 steps on the GPU)."""
    values = np.arange(80.0).reshape(20, 4)
    inputs = on_device(values)
    step = la.jit(lambda block, scale: (block * scale).sum(axis=0))
    misses = la.cache_info().misses
    for index in range(10):
        got = step(inputs[2 * index:2 * index + 2], on_device([2.0]))
        assert_identical(held_on_device(got.eval()), (values[2 * index:2 * index + 2] * 2.0).sum(axis=0))
    assert la.cache_info().misses - misses == 1


def test_writes_through_a_device_view_and_to_its_base_follow_numpys_view_semantics():
    values = np.arange(12.0).reshape(3, 4)
    x = on_device(values)
    view = x[1:3]
    doubled = view * 2  # recorded before the writes: NumPy computed it then
    view[0, 0] = 99.0
    x[2, 1] = -1.0
    expected_x = values.copy()
    expected_view = expected_x[1:3]
    expected_doubled = expected_view * 2
    expected_view[0, 0] = 99.0
    expected_x[2, 1] = -1.0
    assert_identical(np.asarray(x), expected_x)
    assert_identical(np.asarray(view), expected_view)
    assert_identical(np.asarray(doubled), expected_doubled)
    assert_identical(values, np.arange(12.0).reshape(3, 4))  # the caller's data untouched


def test_deep_graph_device_walk_is_iterative():
    x = on_device(np.zeros(2))
    for _ in range(20_000):
        x = x + 1.0
    assert x.device == DEVICE
    np.testing.assert_array_equal(x.numpy(), [20_000.0, 20_000.0])


def test_mixing_devices_in_one_expression_raises_naming_both():
    on_test_device = on_device(np.ones(3))
    on_host = la.asarray(np.ones(3))
    mixed = on_test_device + on_host
    with pytest.raises(ValueError, match=f"(?s)(?=.*'{DEVICE}')(?=.*'cpu')"):
        mixed.eval()
    with pytest.raises(ValueError, match=f"(?s)(?=.*'{DEVICE}')(?=.*'cpu')"):
        mixed.device
    with pytest.raises(ValueError, match=f"(?s)(?=.*'{DEVICE}')(?=.*'cpu')"):
        la.eval(on_test_device * 2, on_host * 2)  # one module would read both
    moved = on_test_device + on_host.to_device(DEVICE)  # the fix the message names
    np.testing.assert_array_equal(moved.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize(
    "scalar",
    [2.5, 3, True, np.float64(2.5), np.array(2.5), np.int32(3), la.asarray(2.5), la.asarray(np.int8(3))],
    ids=lambda scalar: type(scalar).__name__,
)
def test_host_scalars_mix_freely_with_device_arrays(scalar):
    values = np.array([1.0, -2.0, 4.0])
    x = on_device(values)
    result = x * scalar + scalar
    assert result.device == DEVICE
    result.eval()
    host_scalar = np.asarray(scalar)
    assert_identical(held_on_device(result), values * host_scalar + host_scalar)


def test_creation_functions_put_results_on_the_device():
    created = {
        "zeros": (la.zeros((2, 3), device=DEVICE), np.zeros((2, 3))),
        "ones": (la.ones(2, dtype=np.int16, device=DEVICE), np.ones(2, np.int16)),
        "empty": (la.empty(2, device=DEVICE), np.zeros(2)),
        "full": (la.full((2,), 7, device=DEVICE), np.full((2,), 7)),
        "arange": (la.arange(5, device=DEVICE), np.arange(5)),
        "linspace": (la.linspace(0, 1, 5, device=DEVICE), np.linspace(0, 1, 5)),
        "eye": (la.eye(3, k=1, device=DEVICE), np.eye(3, k=1)),
        "asarray": (la.asarray([1, 2], device=DEVICE), np.array([1, 2])),
        "from_dlpack": (la.from_dlpack(np.arange(3.0), device=DEVICE), np.arange(3.0)),
    }
    for name, (array, want) in created.items():
        assert array.device == DEVICE, name
        assert_identical(held_on_device(array), want)
    samples, step = la.linspace(0, 1, 3, retstep=True, device=DEVICE)
    assert samples.device == DEVICE and step.device == DEVICE
    assert float(step) == 0.5


def test_like_functions_follow_the_prototype_device():
    x = on_device(np.arange(4, dtype=np.int32))
    for result, want in [
        (la.zeros_like(x), np.zeros(4, np.int32)),
        (la.ones_like(x, dtype=np.float32), np.ones(4, np.float32)),
        (la.full_like(x, 9), np.full(4, 9, np.int32)),
        (la.empty_like(x), np.zeros(4, np.int32)),
        (la.zeros_like(DeviceBuffer(np.ones(2))), np.zeros(2)),
    ]:
        assert result.device == DEVICE
        assert_identical(held_on_device(result), want)
    assert la.zeros_like(x, device="cpu").device == "cpu"
    assert la.zeros_like(la.asarray([1, 2])).device == "cpu"


def test_default_backend_on_the_device_makes_it_the_default_device():
    la.set_backend(BACKEND)
    runs = DEVICE_BACKEND.runs
    assert la.__array_namespace_info__().default_device() == DEVICE
    ramp = la.arange(4.0) * 2
    assert ramp.device == DEVICE
    assert_identical(held_on_device(ramp.eval()), np.arange(4.0) * 2)
    assert DEVICE_BACKEND.runs == runs + 1
    on_host = la.zeros(2, device="cpu")  # computed on the default device, then copied over
    assert isinstance(bound_buffer(on_host._node), np.ndarray)
    assert_identical(on_host.numpy(), np.zeros(2))


def test_host_data_goes_to_the_default_device():
    """asarray/array of host data (NumPy arrays, lists) make arrays on the default device, as
    JAX's and CuPy's do, so they mix with `la.ones`; 0-d values and lazy arrays stay put."""
    before = la.asarray(np.arange(3.0))
    la.set_backend(BACKEND)
    for made, want in [
        (la.asarray(np.arange(3.0)), np.arange(3.0)),  # the fast path
        (la.asarray(np.arange(3), dtype=np.float32), np.arange(3, dtype=np.float32)),
        (la.asarray([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]])),
        (la.array([1.5, -0.0]), np.array([1.5, -0.0])),
    ]:
        assert made.device == DEVICE
        assert_identical(held_on_device(made), want)
        assert_identical((made * la.ones(want.shape, want.dtype)).numpy(), want)
    assert la.asarray(np.float64(2.0)).device == "cpu"  # a 0-d host array: mixes with any device
    assert la.asarray(before).device == "cpu"  # a lazy array keeps its device
    assert la.asarray(np.arange(2.0), device="cpu").device == "cpu"


def test_jit_takes_numpy_arguments_to_the_default_device():
    """With the device as the default, a jitted function's NumPy arguments are copied to it (as
    JAX's are): the call runs there and shares its trace with device arrays of that signature,
    flat arguments or a pytree; a 0-d NumPy argument stays a host array."""
    la.set_backend(BACKEND)
    x, y = np.arange(4.0), np.ones(4)
    flat = la.jit(lambda a, b: a * 2 + b)
    nested = la.jit(lambda pair: pair["a"] * 2 + pair["b"])
    for function, call in [(flat, lambda a, b: flat(a, b)), (nested, lambda a, b: nested({"a": a, "b": b}))]:
        runs = DEVICE_BACKEND.runs
        result = call(x, y)
        assert result.device == DEVICE
        assert_identical(held_on_device(result.eval()), x * 2 + 1)
        assert DEVICE_BACKEND.runs == runs + 1
        assert_identical(held_on_device(call(la.asarray(x), la.asarray(y)).eval()), x * 2 + 1)
        assert_identical(held_on_device(call(x, np.float64(3.0)).eval()), x * 2 + 3)
        assert function.cache_info().traces == 2  # the arrays' signature, then a 0-d second argument


def test_numpy_data_follows_arrays_put_on_the_host():
    """With the device as the default, arrays put on the host on purpose still take NumPy data
    in a jitted call (the NumPy arguments stay on the host beside them), and a lazy NumPy
    operand of an expression is copied to the device once (its dtype is read on the host)."""
    la.set_backend(BACKEND)
    on_host = la.asarray(np.arange(3.0), device="cpu")
    jitted = la.jit(lambda a, b: a * 2 + b)
    result = jitted(on_host, np.ones(3))
    assert result.device == "cpu"
    assert_identical(result.numpy(), np.arange(3.0) * 2 + 1)
    on_device_array = la.asarray(np.arange(3.0))
    copies = TRANSFERS.from_host_calls
    total = on_device_array + np.ones(3)
    assert TRANSFERS.from_host_calls == copies + 1
    assert_identical(held_on_device(total.eval()), np.arange(3.0) + 1)


def test_unpickled_arrays_go_to_the_default_device():
    """Host data made into an array by unpickling lands on the default device, as `la.asarray`'s
    does, so it mixes with the arrays made there."""
    import pickle

    la.set_backend(BACKEND)
    values = np.arange(12.0).reshape(3, 4)
    restored = pickle.loads(pickle.dumps(la.asarray(values)))
    assert restored.device == DEVICE
    assert_identical(held_on_device((restored * la.ones(values.shape)).eval()), values)


def test_dask_chunk_arrays_go_to_the_default_device():
    """So does a dask chunk (a contiguous chunk is wrapped, a strided one copied: both go)."""
    pytest.importorskip("dask.array", reason="dask[array] is not installed (pip install 'lazyarr[dask]')")
    pytest.importorskip("distributed", reason="distributed is not installed (pip install 'lazyarr[dask]')")
    from lazyarr import dask as lazy_dask

    la.set_backend(BACKEND)
    values = np.arange(12.0).reshape(3, 4)
    for made, want in [(lazy_dask.lazy_chunk(values), values), (lazy_dask.lazy_chunk(values[:, ::2]), values[:, ::2])]:
        assert made.device == DEVICE
        assert_identical(held_on_device((made * la.ones(want.shape)).eval()), want)


# -- interop -------------------------------------------------------------------------------------
def test_dlpack_is_delegated_to_the_device_buffer():
    x = on_device(np.arange(3.0)) + 1
    before = dict(DeviceBuffer.dlpack_calls)
    assert x.__dlpack_device__() == (1, 0)  # what the buffer says (its memory is host memory)
    np.testing.assert_array_equal(np.from_dlpack(x), [1.0, 2.0, 3.0])
    assert DeviceBuffer.dlpack_calls["__dlpack_device__"] == before["__dlpack_device__"] + 1
    assert DeviceBuffer.dlpack_calls["__dlpack__"] == before["__dlpack__"] + 1
    assert TRANSFERS.to_host_calls == 0  # nothing went through the host copy path


def test_only_gpu_arrays_have_a_cuda_array_interface():
    assert not hasattr(on_device([1.0]), "__cuda_array_interface__")
    assert not hasattr(la.asarray([1.0]), "__cuda_array_interface__")
    assert la.asarray([1.0]).__dlpack_device__() == (1, 0)  # host behaviour unchanged


# -- jit -----------------------------------------------------------------------------------------
def test_jit_runs_where_its_arguments_are():
    @la.jit
    def affine(a, b, scale):
        return a * scale + b

    values = np.array([1.0, 2.0, 3.0])
    runs = DEVICE_BACKEND.runs
    on_test_device = affine(on_device(values), on_device(values), 2.0)
    assert on_test_device.device == DEVICE
    assert DEVICE_BACKEND.runs == runs + 1
    assert_identical(held_on_device(on_test_device), values * 2.0 + values)
    on_host = affine(la.asarray(values), values, 2.0)
    assert on_host.device == "cpu"
    assert DEVICE_BACKEND.runs == runs + 1
    assert_identical(on_host.numpy(), values * 2.0 + values)
    assert affine.cache_size() == 2  # one signature per device
    affine(on_device(values), on_device(values), 2.0)
    assert affine.cache_info().hits == 1
    assert DEVICE_BACKEND.runs == runs + 2
    with pytest.raises(ValueError, match=f"(?s)la.jit\\(affine\\)(?=.*'{DEVICE}')(?=.*'cpu')"):
        affine(on_device(values), values, 2.0)


def test_jit_with_a_host_scalar_array_and_device_arrays():
    @la.jit
    def scaled(a, scale):
        return a * scale

    result = scaled(on_device(np.ones(2)), np.array(3.0))  # a host 0-d array goes with any device
    assert result.device == DEVICE
    assert_identical(held_on_device(result), np.full(2, 3.0))


def test_jit_over_captured_device_arrays():
    weights = on_device(np.array([1.0, 2.0]))

    @la.jit
    def doubled():
        return weights * 2

    result = doubled()  # no array arguments: the captured array decides
    assert result.device == DEVICE
    assert_identical(held_on_device(result), np.array([2.0, 4.0]))

    @la.jit
    def plus_weights(a):
        return a + weights

    with pytest.raises(ValueError, match=f"(?s)(?=.*'{DEVICE}')(?=.*'cpu')"):
        plus_weights(np.ones(2))


# -- errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: la.asarray([1], device="nowhere"),
        lambda: la.zeros(2, device="nowhere"),
        lambda: la.arange(2, device="nowhere"),
        lambda: la.asarray([1.0]).to_device("nowhere"),
        lambda: la.eye(2, device="nowhere"),
    ],
)
def test_unknown_device_lists_the_available_ones(make):
    with pytest.raises(ValueError, match="unknown device 'nowhere'") as caught:
        make()
    for device in backends.available_devices():
        assert device in str(caught.value)


def test_namespace_info_reports_the_real_devices():
    info = la.__array_namespace_info__()
    assert info.default_device() == "cpu"
    assert "cpu" in info.devices()
    assert ("gpu" in info.devices()) == _gpu_usable()
    with pytest.raises(ValueError, match="unknown device 'nowhere'"):
        info.dtypes(device="nowhere")


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed here")
def test_gpu_without_cupy_says_what_to_install():
    # The message is gpu.py's (GpuUnavailable); this pins that it reaches the user unchanged.
    with pytest.raises((ImportError, RuntimeError), match=r"lazyarr\[gpu\]"):
        la.asarray(np.ones(2), device="gpu")


# -- the real GPU --------------------------------------------------------------------------------
def _gpu_usable() -> bool:
    try:
        backends.transfer_manager("gpu")
    except (ImportError, RuntimeError):
        return False
    return True


@pytest.fixture
def gpu():
    if not _gpu_usable():
        pytest.skip("no GPU: CuPy is not installed or found no CUDA device")


@pytest.mark.gpu
def test_gpu_arrays_stay_on_the_gpu(gpu):
    values = np.arange(6.0).reshape(2, 3)
    x = la.asarray(values, device="gpu")
    result = (x * 2 + 1).eval()
    assert result.device == "gpu"
    assert type(bound_buffer(result._node)).__module__.startswith("cupy")
    assert_identical(result.numpy(), values * 2 + 1)
    assert hasattr(result, "__cuda_array_interface__")
    assert result.__cuda_array_interface__["shape"] == (2, 3)
    assert result.__dlpack_device__()[0] == 2  # kDLCUDA
    assert_identical(result.to_device("cpu").numpy(), values * 2 + 1)


@pytest.mark.gpu
def test_jit_with_gpu_arrays_runs_on_the_gpu(gpu):
    @la.jit
    def affine(a, b):
        return a * 2.0 + b

    values = np.arange(4.0)
    on_gpu = affine(la.asarray(values, device="gpu"), la.asarray(values, device="gpu"))
    assert on_gpu.device == "gpu"
    assert_identical(on_gpu.numpy(), values * 2.0 + values)
    assert affine(values, values).device == "cpu"
