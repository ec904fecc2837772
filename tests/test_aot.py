"""Ahead-of-time compilation: objects and headers that a C program links and runs.

Each compiled example is built once (module-scoped fixtures), linked with a generated C driver
by the system C compiler, and then run on hypothesis-drawn inputs: the driver reads the inputs
from files, calls the entry point and writes the outputs, which are compared with NumPy.
Cross-compiled objects are only inspected (their ELF header), never run.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr import aot
from lazyarr.__main__ import main as lazyarr_main
from lazyarr.backends.llvm import aot_entry
from lazyarr.compile import build_module
from lazyarr.frontend import array as array_module
from lazyarr.hlo import text

C_COMPILER = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
needs_c_compiler = pytest.mark.skipif(C_COMPILER is None, reason="no C compiler (cc, gcc or clang) on PATH")

# The driver: argv[1] is "scratch" (the caller allocates scratch) or "null" (the entry mallocs
# it); then one file per input, then one per output. Scratch and outputs are filled with 0xff
# bytes (NaN for floats) first, so a value read before it is written, or an output element left
# unwritten, shows in the results.
DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "{name}.h"

static void* load(const char* path, size_t bytes) {{
    void* data = malloc(bytes ? bytes : 1);
    FILE* file = fopen(path, "rb");
    if (!data || !file || fread(data, 1, bytes, file) != bytes) {{
        fprintf(stderr, "cannot read %s\n", path);
        exit(3);
    }}
    fclose(file);
    return data;
}}

static void save(const char* path, const void* data, size_t bytes) {{
    FILE* file = fopen(path, "wb");
    if (!file || fwrite(data, 1, bytes, file) != bytes) {{ fprintf(stderr, "cannot write %s\n", path); exit(4); }}
    fclose(file);
}}

static void* poisoned(size_t bytes) {{
    void* data = aligned_alloc(64, (bytes + 64) / 64 * 64);
    if (!data) exit(5);
    memset(data, 0xff, bytes);
    return data;
}}

int main(int argc, char** argv) {{
    if (argc != {argc}) {{ fprintf(stderr, "expected {argc} arguments\n"); return 2; }}
{declarations}
    void* scratch = strcmp(argv[1], "scratch") == 0 ? poisoned({name}_scratch_bytes()) : NULL;
    int32_t status = {name}({call});
    if (status != 0) return 10 + status;
{saves}
    free(scratch);
    return 0;
}}
"""


class LinkedProgram:
    """An AOT result and the driver linked with it (on first call); calling it runs the driver."""

    def __init__(self, result: aot.AotResult, directory):
        self.result = result
        self.directory = directory
        self.executable = None

    def _link(self) -> None:
        if C_COMPILER is None:
            pytest.skip("no C compiler (cc, gcc or clang) on PATH")
        result, directory = self.result, self.directory
        inputs, outputs = result.arguments, result.results
        lines = [
            f"    void* {label} = load(argv[{2 + position}], {_bytes(shape, dtype)});"
            for position, (label, shape, dtype) in enumerate(inputs)
        ] + [f"    void* {label} = poisoned({_bytes(shape, dtype)});" for label, shape, dtype in outputs]
        saves = [
            f"    save(argv[{2 + len(inputs) + position}], {label}, {_bytes(shape, dtype)});"
            for position, (label, shape, dtype) in enumerate(outputs)
        ]
        source = DRIVER.format(
            name=result.name, argc=2 + len(inputs) + len(outputs), declarations="\n".join(lines),
            call=", ".join([label for label, _, _ in inputs + outputs] + ["scratch"]), saves="\n".join(saves),
        )
        driver = directory / f"{result.name}_driver.c"
        driver.write_text(source)
        executable = directory / f"{result.name}_driver"
        # -Werror: the generated header must compile without a warning.
        compiled = subprocess.run(
            [C_COMPILER, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", f"-I{directory}", str(driver),
             result.object_path, "-lm", "-o", str(executable)],
            capture_output=True, text=True,
        )
        assert compiled.returncode == 0, compiled.stderr
        self.executable = executable

    def __call__(self, *inputs: np.ndarray, scratch: str = "scratch") -> list[np.ndarray]:
        if self.executable is None:
            self._link()
        paths = []
        for position, ((_, shape, dtype), value) in enumerate(zip(self.result.arguments, inputs, strict=True)):
            assert value.shape == shape and value.dtype == dtype
            path = self.directory / f"input{position}.bin"
            path.write_bytes(np.ascontiguousarray(value).tobytes())
            paths.append(path)
        outputs = [self.directory / f"output{position}.bin" for position in range(len(self.result.results))]
        run = subprocess.run([str(self.executable), scratch, *map(str, paths + outputs)], capture_output=True,
                             text=True)
        assert run.returncode == 0, (run.returncode, run.stderr)
        return [
            np.frombuffer(path.read_bytes(), dtype=dtype).reshape(shape)
            for path, (_, shape, dtype) in zip(outputs, self.result.results)
        ]


def _bytes(shape, dtype) -> int:
    return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize


def traced_module(function, *examples: np.ndarray):
    """The module of `function` applied to lazy arrays of `examples`, parameters in argument order."""
    leaves = [la.asarray(example) for example in examples]
    results = function(*leaves)
    results = results if isinstance(results, tuple) else (results,)
    module, buffers = build_module([result._node for result in results], array_module.bound_buffer,
                                   name="traced", lift_scalars=False)
    buffer_of = [array_module.bound_buffer(leaf._node) for leaf in leaves]
    order = [next(position for position, buffer in enumerate(buffer_of) if buffer is used) for used in buffers]
    assert order == list(range(len(examples))), "the examples must be used in argument order"
    return module


def float32_arrays(shape, low=-4.0, high=4.0):
    return hnp.arrays(np.float32, shape, elements=st.floats(low, high, width=32))


# -- a fused elementwise + reduction graph with two outputs ------------------------------------


def fused_graph(x, y):
    scaled = la.exp(x) * y + 1
    return scaled.sum(axis=1), la.maximum(x, 0).max(axis=0)


@pytest.fixture(scope="module")
def fused_program(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fused")
    module = traced_module(fused_graph, np.zeros((6, 5), np.float32), np.zeros(5, np.float32))
    result = aot.compile_module(module, "fused", output_dir=directory)
    return LinkedProgram(result, directory)


@needs_c_compiler
@given(x=float32_arrays((6, 5)), y=float32_arrays(5))
def test_fused_elementwise_and_reduction_match_numpy(fused_program, x, y):
    total, largest = fused_program(x, y)
    want_total = (np.exp(x) * y + 1).sum(axis=1)
    assert total.shape == want_total.shape and total.dtype == want_total.dtype
    # exp is within 4 ULP of NumPy's (README) and the 6-term sum runs in another order: each
    # costs a few float32 epsilons (1.2e-7) of the terms' magnitudes, so 1e-5 of them bounds both.
    scale = (np.abs(np.exp(x) * y) + 1).sum(axis=1)
    np.testing.assert_array_less(np.abs(total - want_total), 1e-5 * scale)
    np.testing.assert_array_equal(largest, np.maximum(x, 0).max(axis=0))  # max is exact


@needs_c_compiler
def test_entry_mallocs_its_scratch_when_given_null(fused_program):
    x = np.linspace(-2, 2, 30, dtype=np.float32).reshape(6, 5)
    y = np.arange(5, dtype=np.float32)
    with_scratch = fused_program(x, y, scratch="scratch")
    with_null = fused_program(x, y, scratch="null")
    for given_scratch, own_scratch in zip(with_scratch, with_null):
        np.testing.assert_array_equal(given_scratch, own_scratch)  # the same code runs either way


# -- a small MLP forward pass: dot, bias, relu, dot, bias --------------------------------------


def mlp(x, w1, b1, w2, b2):
    hidden = la.maximum(x @ w1 + b1, 0)
    return hidden @ w2 + b2


MLP_SHAPES = [(8, 5), (5, 16), (16,), (16, 3), (3,)]


@pytest.fixture(scope="module")
def mlp_program(tmp_path_factory):
    directory = tmp_path_factory.mktemp("mlp")
    result = la.aot.compile(mlp, *(la.ShapeDtypeStruct(shape, np.float32) for shape in MLP_SHAPES),
                            output_dir=directory)
    return LinkedProgram(result, directory)


@needs_c_compiler
@given(data=st.data())
def test_mlp_forward_matches_numpy(mlp_program, data):
    x, w1, b1, w2, b2 = (data.draw(float32_arrays(shape, -1.0, 1.0), label=str(shape)) for shape in MLP_SHAPES)
    (got,) = mlp_program(x, w1, b1, w2, b2)
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    assert got.shape == want.shape and got.dtype == want.dtype
    # Both sides round in float32, summing in other orders: with |inputs| <= 1 each of the 16-term
    # hidden sums is off by at most 16 * 2^-24 * 16 ~ 2e-5 relative to its terms' magnitudes,
    # and the second layer scales that by at most 16 weights of magnitude <= 1.
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@needs_c_compiler
def test_mlp_keeps_intermediates_in_scratch(mlp_program):
    # the hidden layer (8 x 16 float32 = 512 bytes) lives in scratch, never in an output
    assert mlp_program.result.scratch_bytes >= 8 * 16 * 4
    assert "x, const float* w1" in mlp_program.result.entry_signature
    x, w1, b1, w2, b2 = (np.full(shape, 0.5, np.float32) for shape in MLP_SHAPES)
    given_scratch, own_scratch = mlp_program(x, w1, b1, w2, b2), mlp_program(x, w1, b1, w2, b2, scratch="null")
    np.testing.assert_array_equal(given_scratch[0], own_scratch[0])
    np.testing.assert_array_equal(given_scratch[0], np.full((8, 3), 0.5 + 16 * 0.5 * (0.5 + 5 * 0.25), np.float32))


def filled(shape, step):
    """The inputs tests/data/aot_mlp_main.c fills: ((i * step) % 11 - 5) / 8, exact in float32."""
    count = int(np.prod(shape))
    return ((np.arange(count) * step % 11 - 5) / 8).astype(np.float32).reshape(shape)


@needs_c_compiler
def test_hand_written_c_program_calls_the_mlp(mlp_program, tmp_path):
    executable = tmp_path / "mlp_main"
    source = pathlib.Path(__file__).parent / "data" / "aot_mlp_main.c"
    compiled = subprocess.run(
        [C_COMPILER, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{mlp_program.directory}", str(source),
         mlp_program.result.object_path, "-lm", "-o", str(executable)],
        capture_output=True, text=True,
    )
    assert compiled.returncode == 0, compiled.stderr
    run = subprocess.run([str(executable)], capture_output=True, text=True, check=True)
    got = np.array(run.stdout.split(), dtype=np.float32).reshape(8, 3)
    x, w1, b1, w2, b2 = (filled(shape, step) for step, shape in enumerate(MLP_SHAPES, start=1))
    # inputs of magnitude <= 5/8 and float32 sums of <= 16 terms in another order; see above
    np.testing.assert_allclose(got, np.maximum(x @ w1 + b1, 0) @ w2 + b2, rtol=1e-4, atol=1e-4)


# -- the function-level API: closed-over arrays become constants -------------------------------

WEIGHTS = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


@needs_c_compiler
@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_closed_over_arrays_are_constants_in_the_object(tmp_path, backend):
    weights = la.asarray(WEIGHTS) * 2  # lazy: evaluated (on the backend) before tracing

    def projected(x, bias):
        return la.tanh(x @ weights + bias)

    previous = la.get_backend_name()
    la.set_backend(backend)
    try:
        result = la.aot.compile(projected, np.zeros((5, 3), np.float32), "f32[4]", output_dir=tmp_path)
    finally:
        la.set_backend(previous)
    assert result.entry_signature == "int32_t projected(const float* x, const float* bias, float* out0, void* scratch)"
    x = np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)
    bias = np.array([0.5, -0.5, 0, 1], np.float32)
    (got,) = LinkedProgram(result, tmp_path)(x, bias)
    # a 3-term float32 dot and tanh (within 4 ULP of NumPy's): 1e-6 is several ULP of values <= 1
    np.testing.assert_allclose(got, np.tanh(x @ (WEIGHTS * 2) + bias), rtol=1e-6, atol=1e-6)


def test_a_lambda_needs_a_name(tmp_path):
    with pytest.raises(ValueError, match="a lambda has no usable name; pass name="):
        la.aot.compile(lambda x: x + 1, "f32[3]", output_dir=tmp_path)
    result = la.aot.compile(lambda x: x + 1, "f32[3]", name="increment", output_dir=tmp_path)
    assert result.entry_signature == "int32_t increment(const float* x, float* out0, void* scratch)"


# -- the command line: python -m lazyarr aot ----------------------------------------------------

MODEL_SOURCE = """
import lazyarr as la

def normalized(x, y):
    return x / la.sum(x * y, axis=0)
"""


@needs_c_compiler
def test_command_line_compiles_a_function_from_a_file(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text(MODEL_SOURCE)
    output = tmp_path / "build"
    status = lazyarr_main(["aot", f"{source}:normalized", "--arg", "f64[3,2]", "--arg", "f64[2]",
                           "--name", "normalize", "-o", str(output)])
    printed = capsys.readouterr().out.splitlines()
    assert status == 0
    assert printed == [str(output / "normalize.o"), str(output / "normalize.h"),
                       "int32_t normalize(const double* x, const double* y, double* out0, void* scratch)"]
    result = aot.AotResult("normalize", str(output / "normalize.o"), str(output / "normalize.h"), printed[2],
                           "", (("x", (3, 2), np.dtype(np.float64)), ("y", (2,), np.dtype(np.float64))),
                           (("out0", (3, 2), np.dtype(np.float64)),), 0)
    x = np.arange(1, 7, dtype=np.float64).reshape(3, 2)
    y = np.array([2.0, -1.0])
    (got,) = LinkedProgram(result, output)(x, y)
    np.testing.assert_array_equal(got, x / np.sum(x * y, axis=0))  # small integers, one division: exact


def test_command_line_takes_a_module_name_and_the_file_sees_its_neighbours(tmp_path, capsys, monkeypatch):
    (tmp_path / "helpers.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "model_module.py").write_text("from helpers import double\n\ndef twice(x):\n    return double(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert lazyarr_main(["aot", "model_module:twice", "--arg", "s64[3]", "-o", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "int32_t twice(const int64_t* x, int64_t* out0, void* scratch)"
    monkeypatch.undo()
    for name in ("helpers", "model_module"):
        sys.modules.pop(name, None)
    # the file form finds helpers.py next to the file by itself, as running the file would
    assert lazyarr_main(["aot", f"{tmp_path / 'model_module.py'}:twice", "--arg", "s64[3]", "-o", str(tmp_path)]) == 0


@pytest.mark.parametrize("arguments, message", [
    (["nowhere.py:f", "--arg", "f32[2]"], "no such file 'nowhere.py'"),
    (["{source}:missing", "--arg", "f32[2]"], "has no function 'missing'"),
    (["{source}:normalized", "--arg", "f32[2", "--arg", "f32[2]"], "is not a spec like 'f32\\[100,3\\]'"),
    (["{source}", "--arg", "f32[2]"], "must be path/to/file.py:function or module:function"),
    (["{source}:normalized", "--arg", "f32[2]", "--arg", "f32[2]", "--triple", "nonsense-cpu-none"],
     "unknown triple"),
])
def test_command_line_errors_are_one_line_and_status_2(tmp_path, capsys, arguments, message):
    source = tmp_path / "model.py"
    source.write_text(MODEL_SOURCE)
    status = lazyarr_main(["aot", *(argument.format(source=source) for argument in arguments), "-o", str(tmp_path)])
    error = capsys.readouterr().err
    assert status == 2
    assert error.startswith("lazyarr aot: error: ") and error.count("\n") == 1
    assert re.search(message, error), error


# -- softmax ----------------------------------------------------------------------------------


def softmax(x):
    shifted = x - la.max(x, axis=-1, keepdims=True)
    exponentials = la.exp(shifted)
    return exponentials / la.sum(exponentials, axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def softmax_program(tmp_path_factory):
    directory = tmp_path_factory.mktemp("softmax")
    result = aot.compile_module(traced_module(softmax, np.zeros((4, 7), np.float64)), "softmax", output_dir=directory)
    return LinkedProgram(result, directory)


@needs_c_compiler
@given(x=hnp.arrays(np.float64, (4, 7), elements=st.floats(-50, 50)))
def test_softmax_matches_numpy(softmax_program, x):
    (got,) = softmax_program(x)
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    want = shifted / shifted.sum(axis=-1, keepdims=True)
    assert got.shape == want.shape and got.dtype == want.dtype
    # float64 exp within 4 ULP of NumPy's, a 7-term sum in another order and one division:
    # a few times 2^-52 relative, so 1e-13 leaves a wide margin and still catches any slip.
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


# -- dots with batch dims, transposed operands and integers (HLO text) ------------------------

# batched: lhs contracts over its middle dim (copied to scratch transposed), rhs over its last;
# both_transposed: both operands contract over their first dim (two copies in one area);
# gram: one operand twice, contracting over the last dims (read in place).
DOTS = """HloModule dots
ENTRY main {
  a = f32[2,5,4] parameter(0)
  b = f32[2,3,5] parameter(1)
  c = s32[4,6] parameter(2)
  d = f32[5,4] parameter(3)
  e = f32[5,3] parameter(4)
  batched = f32[2,4,3] dot(a, b), lhs_batch={0}, rhs_batch={0}, lhs_contracting={1}, rhs_contracting={2}
  gram = s32[4,4] dot(c, c), lhs_batch={}, rhs_batch={}, lhs_contracting={1}, rhs_contracting={1}
  both_transposed = f32[4,3] dot(d, e), lhs_batch={}, rhs_batch={}, lhs_contracting={0}, rhs_contracting={0}
  ROOT outputs = (f32[2,4,3], s32[4,4], f32[4,3]) tuple(batched, gram, both_transposed)
}"""


@pytest.fixture(scope="module", params=["", "native"], ids=["generic-cpu", "native-cpu"])
def dots_program(tmp_path_factory, request):
    directory = tmp_path_factory.mktemp("dots")
    result = aot.compile_module(text.parse(DOTS), "dots", output_dir=directory, cpu=request.param)
    return LinkedProgram(result, directory)


@needs_c_compiler
@given(a=float32_arrays((2, 5, 4)), b=float32_arrays((2, 3, 5)), d=float32_arrays((5, 4)), e=float32_arrays((5, 3)),
       c=hnp.arrays(np.int32, (4, 6), elements=st.integers(-2**31, 2**31 - 1)))
def test_dots_with_batch_and_transposed_operands_match_numpy(dots_program, a, b, c, d, e):
    batched, gram, both_transposed = dots_program(a, b, c, d, e)
    for got, want, magnitude in [
        (batched, np.einsum("bki,bjk->bij", a, b), np.einsum("bki,bjk->bij", np.abs(a), np.abs(b))),
        (both_transposed, d.T @ e, np.abs(d.T) @ np.abs(e)),
    ]:
        assert got.shape == want.shape and got.dtype == want.dtype
        # 5-term float32 sums in another order: off by 5 * 2^-24 of the terms' magnitudes at most
        # (1e-5 is a margin of 30); zero where every term is zero
        np.testing.assert_array_less(np.abs(got - want), 1e-5 * magnitude + 1e-30)
    np.testing.assert_array_equal(gram, c @ c.T)  # integer arithmetic wraps the same way: exact


def test_native_cpu_is_only_for_this_machine(tmp_path):
    with pytest.raises(ValueError, match="cpu='native' means this machine's CPU"):
        other = "aarch64-unknown-linux-gnu" if aot_entry.host_triple().startswith("x86_64") else "x86_64-pc-linux-gnu"
        aot.compile_module(text.parse(DOTS), "dots", output_dir=tmp_path, cpu="native", triple=other)


# -- outputs that are parameters, constants or repeated; constants in memory; 0-d, bool, empty --

EDGES = """HloModule edges
ENTRY main {
  p0 = f32[12] parameter(0)
  p1 = pred[3] parameter(1)
  p2 = f32[0,4] parameter(2)
  table = f32[12] constant({0.0,1.0,2.0,3.0,4.0,5.0,6.0,7.0,8.0,9.0,10.0,11.0})
  add.1 = f32[12] add(p0, table)
  reduce.2 = f32[] reduce(add.1), dimensions={0}, kind=max
  not.3 = pred[3] not(p1)
  negate.4 = f32[0,4] negate(p2)
  ROOT outputs = (f32[12], f32[], f32[12], f32[12], f32[12], pred[3], f32[0,4], pred[3]) tuple(add.1, \
reduce.2, p0, add.1, table, not.3, negate.4, p1)
}"""


@needs_c_compiler
@pytest.mark.parametrize("scratch", ["scratch", "null"])
def test_outputs_that_are_parameters_constants_or_repeated(tmp_path, scratch):
    program = LinkedProgram(aot.compile_module(text.parse(EDGES), "edges", output_dir=tmp_path), tmp_path)
    p0 = np.linspace(-3, 3, 12, dtype=np.float32)
    p1 = np.array([True, False, True])
    p2 = np.zeros((0, 4), np.float32)
    table = np.arange(12, dtype=np.float32)
    got = program(p0, p1, p2, scratch=scratch)
    want = [p0 + table, (p0 + table).max(), p0, p0 + table, table, ~p1, -p2, p1]
    assert [value.shape for value in got] == [value.shape for value in want]
    assert [value.dtype for value in got] == [np.asarray(value).dtype for value in want]
    for got_value, want_value in zip(got, want):
        np.testing.assert_array_equal(got_value, want_value)  # adds of exact small floats: exact


UNREAD_OUTPUT = """HloModule unread

fused_computation.1 {
  p0 = f32[4] parameter(0)
  exp.1 = f32[4] exp(p0)
  negate.2 = f32[4] negate(p0)
  ROOT outputs = (f32[4], f32[4]) tuple(exp.1, negate.2)
}

ENTRY main {
  p0 = f32[4] parameter(0)
  fusion.1 = f32[4] fusion(p0), computation=fused_computation.1, kind=loop, output_index=1
  ROOT add.2 = f32[4] add(fusion.1, fusion.1)
}"""


@needs_c_compiler
@pytest.mark.parametrize("scratch", ["scratch", "null"])
def test_kernel_output_nothing_reads_still_gets_memory(tmp_path, scratch):
    result = aot.compile_module(text.parse(UNREAD_OUTPUT), "unread", output_dir=tmp_path)
    assert result.scratch_bytes == 2 * 64  # the temp fusion.1 and the unread exp, a cache line each
    (got,) = LinkedProgram(result, tmp_path)(np.array([1, -2, 0.5, 0], np.float32), scratch=scratch)
    np.testing.assert_array_equal(got, np.array([-2, 4, -1, -0.0], np.float32))  # negations and doubling: exact


# -- cross compilation ----------------------------------------------------------------------

ELF_MACHINES = {"aarch64-unknown-linux-gnu": 183, "x86_64-unknown-linux-gnu": 62}  # EM_AARCH64, EM_X86_64


@pytest.mark.parametrize("triple", sorted(ELF_MACHINES))
def test_cross_compiled_object_is_an_elf_for_the_triple(tmp_path, triple):
    module = traced_module(softmax, np.zeros((4, 7), np.float32))
    result = aot.compile_module(module, "softmax", output_dir=tmp_path, triple=triple)
    assert result.triple == triple
    data = open(result.object_path, "rb").read()
    assert data[:4] == b"\x7fELF"
    assert data[4] == 2 and data[5] == 1  # ELFCLASS64, little endian
    assert int.from_bytes(data[16:18], "little") == 1  # ET_REL: an object to link
    assert int.from_bytes(data[18:20], "little") == ELF_MACHINES[triple]
    assert b"softmax_scratch_bytes" in data  # the symbol table names the exported functions


# -- the header --------------------------------------------------------------------------------


def test_header_declares_the_entry_point_with_shapes_and_guards(fused_program):
    result = fused_program.result
    header = open(result.header_path).read()
    for expected in [
        "#include <stddef.h>", "#include <stdint.h>", "#ifndef LAZYARR_AOT_FUSED_H", 'extern "C" {',
        "size_t fused_scratch_bytes(void);",
        " *   arg0: input float32[6,5], 30 elements of float",
        " *   arg1: input float32[5], 5 elements of float",
        " *   out0: output float32[6], 6 elements of float",
        " *   out1: output float32[5], 5 elements of float",
        "int32_t fused(const float* arg0, const float* arg1, float* out0, float* out1, void* scratch);",
    ]:
        assert expected in header, expected
    assert result.entry_signature == (
        "int32_t fused(const float* arg0, const float* arg1, float* out0, float* out1, void* scratch)"
    )


@pytest.mark.skipif(shutil.which("c++") is None, reason="no C++ compiler (c++) on PATH")
def test_header_compiles_as_cpp(fused_program, tmp_path):
    source = tmp_path / "use.cpp"
    source.write_text('#include "fused.h"\nint main() { return fused_scratch_bytes() > 1000000 ? 1 : 0; }\n')
    compiled = subprocess.run(
        ["c++", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", f"-I{fused_program.directory}", str(source)],
        capture_output=True, text=True,
    )
    assert compiled.returncode == 0, compiled.stderr


def test_header_spells_bool_and_float16_as_bytes_and_bits(tmp_path):
    module = text.parse("HloModule m\nENTRY main {\n  p0 = f16[2] parameter(0)\n  p1 = pred[2] parameter(1)\n"
                        "  ROOT outputs = (f16[2], pred[2]) tuple(p0, p1)\n}")
    result = aot.compile_module(module, "kinds", output_dir=tmp_path, argument_names=["half", "flag"])
    header = open(result.header_path).read()
    assert "half: input float16[2], 2 elements of uint16_t (IEEE binary16 bits)" in header
    assert "flag: input bool[2], 2 elements of uint8_t (one byte each, 0 or 1)" in header
    assert result.entry_signature == (
        "int32_t kinds(const uint16_t* half, const uint8_t* flag, uint16_t* out0, uint8_t* out1, void* scratch)"
    )


@pytest.mark.parametrize("names", [["x"], ["x", "x"], ["out0", "y"], ["int", "y"], ["1x", "y"], ["scratch", "y"]])
def test_unusable_argument_names_fall_back_to_positions(tmp_path, names):
    module = text.parse("HloModule m\nENTRY main {\n  p0 = f32[2] parameter(0)\n  p1 = f32[2] parameter(1)\n"
                        "  ROOT add.2 = f32[2] add(p0, p1)\n}")
    result = aot.compile_module(module, "pair", output_dir=tmp_path, argument_names=names)
    assert [label for label, _, _ in result.arguments] == ["arg0", "arg1"]


# -- clear errors -----------------------------------------------------------------------------


@pytest.mark.parametrize("function, op", [(la.sort, "'sort'")])
def test_ops_that_need_python_are_refused_by_name(tmp_path, function, op):
    module = traced_module(lambda x: function(x) + 1, np.zeros(5, np.float32))
    with pytest.raises(NotImplementedError, match=f"aot: op {op} needs the Python runtime"):
        aot.compile_module(module, "refused", output_dir=tmp_path)


@needs_c_compiler
def test_scans_compile_ahead_of_time(tmp_path):
    """cumsum is a kernel root (KernelBuilder._scan): NumPy's order, so NumPy's bits."""
    module = traced_module(lambda x: (la.cumsum(x * 2, axis=1), la.cumsum(x, axis=0)), np.zeros((4, 6), np.float32))
    program = LinkedProgram(aot.compile_module(module, "scans", output_dir=tmp_path), tmp_path)
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    along_rows, along_columns = program(x)
    np.testing.assert_array_equal(along_rows, np.cumsum(x * 2, axis=1))
    np.testing.assert_array_equal(along_columns, np.cumsum(x, axis=0))


def test_complex_values_are_refused(tmp_path):
    module = text.parse("HloModule m\nENTRY main {\n  p0 = c64[2] parameter(0)\n  ROOT negate.1 = c64[2] negate(p0)\n}")
    with pytest.raises(NotImplementedError, match=r"aot: parameter 0 is complex64\[2\]"):
        aot.compile_module(module, "complex", output_dir=tmp_path)


@pytest.mark.parametrize("spec, message", [
    ("f32[3,", "is not a spec like 'f32\\[100,3\\]'"),
    ("f32(3)", "is not a spec like"),
    ("q7[3]", "unknown dtype 'q7'; accepted: .*f32"),
    ("f32[3,,4]", "has an empty dimension"),
])
def test_bad_spec_strings_say_what_is_accepted(spec, message):
    with pytest.raises(ValueError, match=message):
        aot.parse_spec(spec)


def test_spec_forms():
    assert aot.parse_spec("f32[100,3]") == ((100, 3), np.dtype(np.float32))
    assert aot.parse_spec("float64[]") == ((), np.dtype(np.float64))
    assert aot.parse_spec(" pred[ 2 , 3 ] ") == ((2, 3), np.dtype(bool))
    assert aot.parse_spec(np.zeros((4, 1), np.int16)) == ((4, 1), np.dtype(np.int16))
    with pytest.raises(TypeError, match="must be a ShapeDtypeStruct, an array or a string"):
        aot.parse_spec(3.5)
    with pytest.raises(ValueError, match="has dtype complex64; accepted"):
        aot.parse_spec(np.zeros(3, np.complex64))


PAIR = "HloModule m\nENTRY main {\n  p0 = f32[2] parameter(0)\n  ROOT negate.1 = f32[2] negate(p0)\n}"


def test_bad_triple_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="unknown triple 'nonsense-cpu-none'"):
        aot.compile_module(text.parse(PAIR), "negate", output_dir=tmp_path, triple="nonsense-cpu-none")
    with pytest.raises(TypeError, match="triple must be a string"):
        aot.compile_module(text.parse(PAIR), "negate", output_dir=tmp_path, triple=64)


@pytest.mark.parametrize("name", ["1model", "my-model", "int", "free", "malloc", "expf", "hypot", "__hidden", "",
                                  None])
def test_names_that_cannot_be_c_functions_are_refused(tmp_path, name):
    with pytest.raises(ValueError, match="cannot name a C function"):
        aot.compile_module(text.parse(PAIR), name, output_dir=tmp_path)


@pytest.mark.parametrize("suffix", [".o", ".h"])
def test_a_symlink_planted_at_an_output_path_is_replaced_not_followed(tmp_path, suffix):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    planted = tmp_path / f"negate{suffix}"
    planted.symlink_to(victim)
    result = aot.compile_module(text.parse(PAIR), "negate", output_dir=tmp_path)
    assert victim.read_bytes() == b"precious"
    assert not planted.is_symlink()
    assert pathlib.Path(result.object_path).stat().st_size > 0
    assert "int32_t negate(" in pathlib.Path(result.header_path).read_text()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["negate.h", "negate.o", "victim"]
