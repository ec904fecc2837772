"""`python -m lazyarr run-hlo`: replaying HLO modules on two backends and comparing outputs.

Two subprocesses check the real command line (a --dump_to file, the command list); the
rest calls `lazyarr.__main__.main(argv)` in-process. Backends that disagree on purpose are
the interpreter with its outputs perturbed, registered under a test-only name.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr import __main__ as command_line
from lazyarr import _flags, run_hlo
from lazyarr.backends import base
from lazyarr.backends.interpreter import InterpreterBackend
from lazyarr.hlo.text import parse

REPOSITORY = Path(__file__).resolve().parent.parent
MODULE_TEXT = """HloModule scaled_rows

ENTRY main {
  p0 = f32[4,33] parameter(0)
  p1 = f32[33] parameter(1)
  broadcast.2 = f32[4,33] broadcast(p1), dimensions={1}, shape={4,33}
  multiply.3 = f32[4,33] multiply(p0, broadcast.2)
  exp.4 = f32[4,33] exp(multiply.3)
  reduce.5 = f32[4] reduce(exp.4), dimensions={1}, kind=sum
  p2 = s32[4] parameter(2)
  negate.7 = s32[4] negate(p2)
  ROOT outputs = (f32[4], f32[4,33], s32[4]) tuple(reduce.5, multiply.3, negate.7)
}
"""


@pytest.fixture
def module_file(tmp_path):
    path = tmp_path / "scaled_rows.txt"
    path.write_text(MODULE_TEXT)
    return path


class PerturbedBackend(InterpreterBackend):
    """The interpreter with `perturb(index, output)` applied to every output it returns."""

    def __init__(self, name, perturb):
        self.name, self.perturb = name, perturb

    def compile(self, module, pipeline_dump=None):
        executable = super().compile(module, pipeline_dump)
        perturb = self.perturb

        class Perturbed:
            def run(self, arguments):
                return [perturb(index, output) for index, output in enumerate(executable.run(arguments))]

        return Perturbed()


@pytest.fixture
def register(monkeypatch):
    """register(name, perturb): a backend known by `name` for this test only (the names are
    distinct across tests, since the compile cache keys executables by backend name)."""

    def add(name, perturb):
        monkeypatch.setitem(base._BACKEND_MODULES, name, "tests.test_run_hlo")
        monkeypatch.setitem(base._LOADED, name, PerturbedBackend(name, perturb))
        return name

    return add


def replay(*argv) -> int:
    return command_line.main(["run-hlo", *map(str, argv)])


def python_module(*argv, **options):
    return subprocess.run([sys.executable, "-m", "lazyarr", *map(str, argv)], cwd=REPOSITORY,
                          capture_output=True, text=True, timeout=120, **options)


# ----------------------------------------------------------------------- command line


def test_a_dumped_module_replays_through_python_dash_m(tmp_path, monkeypatch):
    monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)  # restored after the test
    _flags.with_overrides(dump_to=str(tmp_path / "dumps"), backend="cpu")
    la.clear_cache()  # dumps are written when compiling
    x = la.asarray(np.linspace(-2.0, 2.0, 60).reshape(3, 20))
    (la.tanh(x) * 0.75 + x.sum(axis=0)).eval()
    (dumped,) = sorted((tmp_path / "dumps").glob("module_*.main.before_optimizations.txt"))
    finished = python_module("run-hlo", dumped, "--backend", "cpu", "--compare", "interpreter", "--repeat", "2")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "p0" in finished.stdout and "f64[3,20]" in finished.stdout
    assert "OK: all 1 output(s) agree between cpu and interpreter" in finished.stdout
    assert "min / median of 2" in finished.stdout


def test_float32_work_dumped_with_a_float64_output_replays_as_agreeing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)  # restored after the test
    _flags.with_overrides(dump_to=str(tmp_path / "dumps"), backend="cpu")
    la.clear_cache()
    x = la.asarray(np.linspace(-3.0, 3.0, 100_000, dtype=np.float32))
    (la.exp(x) * la.sin(x)).sum().astype(np.float64).eval()  # the CPU sums float32 in another order
    (dumped,) = sorted((tmp_path / "dumps").glob("module_*.main.before_optimizations.txt"))
    assert replay(dumped, "--backend", "cpu", "--compare", "interpreter") == 0
    text = capsys.readouterr().out
    assert "output 0: f64[]" in text and "(rtol 1e-05, atol 1e-05)" in text


def test_the_working_float_type_leaves_out_exact_parameters_and_constants():
    module = parse("""HloModule m
ENTRY main {
  p0 = f32[3] parameter(0)
  convert.1 = f64[3] convert(p0), dtype=f64
  constant.2 = f16[] constant(1.5)
  convert.3 = f64[] convert(constant.2), dtype=f64
  broadcast.4 = f64[3] broadcast(convert.3), dimensions={}, shape={3}
  ROOT multiply.5 = f64[3] multiply(convert.1, broadcast.4)
}""")
    assert run_hlo.working_float_dtype(module) == np.float64
    assert run_hlo.working_float_dtype(parse(MODULE_TEXT)) == np.float32
    want = np.ones(3)
    assert not run_hlo.compare_output(0, want * (1 + 1e-7), want).agrees
    assert run_hlo.compare_output(0, want * (1 + 1e-7), want, working_dtype=np.dtype(np.float32)).agrees


def test_a_parameter_too_large_for_memory_is_bad_input(tmp_path, capsys):
    path = tmp_path / "huge.txt"  # 4e14 bytes: more than a 64-bit process's address space
    path.write_text("HloModule huge\nENTRY main {\n  p0 = f32[100000000000000] parameter(0)\n"
                    "  ROOT negate.1 = f32[100000000000000] negate(p0)\n}\n")
    assert replay(path) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("run-hlo: parameter p0 (f32[100000000000000], 400000000000000 bytes) does not fit")


def test_help_lists_the_commands():
    finished = python_module("--help")
    assert finished.returncode == 0
    assert "run-hlo" in finished.stdout and "aot" in finished.stdout


def test_run_hlo_help_names_its_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        replay("--help")
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--backend", "--compare", "--inputs", "--seed", "--repeat", "--rtol", "--atol", "Exit status"):
        assert option in text


def test_no_command_prints_help_and_fails(capsys):
    assert command_line.main([]) == 2
    assert "run-hlo" in capsys.readouterr().err


def test_a_command_whose_module_is_missing_fails_clearly(monkeypatch, capsys):
    monkeypatch.setitem(command_line.COMMANDS, "missing", ("lazyarr.no_such_tool", "a tool not written yet"))
    assert command_line.main(["missing", "--anything"]) == 2
    assert "lazyarr.no_such_tool is missing" in capsys.readouterr().err


# ----------------------------------------------------------------------------- replay


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_a_written_module_agrees_between_backends(module_file, backend, capsys):
    assert replay(module_file, "--backend", backend, "--compare", "interpreter", "--seed", "3") == 0
    text = capsys.readouterr().out
    assert "output 2: s32[4]" in text and "(exact)" in text
    assert "OK: all 3 output(s) agree" in text


def test_inputs_come_from_an_npz_keyed_by_number_or_name(module_file, tmp_path, capsys):
    values = [np.full((4, 33), 0.5, np.float32), np.arange(33, dtype=np.float32), np.arange(4, dtype=np.int32)]
    path = tmp_path / "inputs.npz"
    np.savez(path, p0=values[0], **{"1": values[1]}, arr_2=values[2])
    loaded = run_hlo.load_inputs(str(path), parse(MODULE_TEXT).entry.parameters)
    for got, want in zip(loaded, values, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert replay(module_file, "--inputs", path) == 0
    assert f"from {path}" in capsys.readouterr().out


@pytest.mark.parametrize(("arrays", "message"), [
    ({"p0": np.zeros((4, 33), np.float32), "p1": np.zeros(33, np.float32)}, "no array for parameter 2"),
    ({"p0": np.zeros((4, 33)), "p1": np.zeros(33, np.float32), "p2": np.zeros(4, np.int32)},
     "p0 expects f32[4,33], but"),
    ({"weights": np.zeros(3)}, "'weights', which names no parameter"),
])
def test_bad_inputs_are_refused_with_the_reason(module_file, tmp_path, capsys, arrays, message):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    assert replay(module_file, "--inputs", path) == 2
    assert message in capsys.readouterr().err


def test_unreadable_modules_are_refused(tmp_path, capsys):
    assert replay(tmp_path / "absent.txt") == 2
    assert "absent.txt" in capsys.readouterr().err
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not hlo\n")
    assert replay(garbage) == 2
    assert "line 1: expected 'HloModule'" in capsys.readouterr().err


def test_a_one_ulp_difference_is_within_the_default_tolerance(module_file, register, capsys):
    name = register("one-ulp", lambda index, output: (
        np.nextafter(output, np.inf) if output.dtype.kind == "f" else output))
    assert replay(module_file, "--backend", name) == 0
    assert "max ulp 1" in capsys.readouterr().out


def test_a_larger_difference_fails_and_is_measured(module_file, register, capsys):
    name = register("scaled", lambda index, output: output * np.float32(1.001) if index == 1 else output)
    assert replay(module_file, "--backend", name, "--compare", "interpreter") == 1
    text = capsys.readouterr().out
    line = next(line for line in text.splitlines() if line.startswith("output 1"))
    assert "DIFFERS" in line and "max rel 0.001" in line
    assert "DIFFERS: output(s) 1 of 3" in text
    # The same difference passes under a looser tolerance (1.001 is 1e-3 relative, rounded in f32).
    assert replay(module_file, "--backend", name, "--rtol", "2e-3") == 0


def test_nan_positions_and_integer_changes_are_reported(module_file, register, capsys):
    def perturb(index, output):
        output = output.copy()
        output.flat[0] = np.nan if output.dtype.kind == "f" else output.flat[0] + 1
        return output

    name = register("nan-at-zero", perturb)
    assert replay(module_file, "--backend", name) == 1
    text = capsys.readouterr().out
    assert text.count("NaN mismatches 1") == 2
    assert "output 2: s32[4]  max abs 1" in text


def test_a_failing_backend_is_reported(module_file, register, capsys):
    def fail(index, output):
        raise FloatingPointError("kernel exploded")

    name = register("exploding", fail)
    assert replay(module_file, "--backend", name) == 1
    assert "exploding: run failed: FloatingPointError: kernel exploded" in capsys.readouterr().out


# ---------------------------------------------------------------------------- measures


def reference_ulp(got: float, want: float, dtype) -> int:
    """Distance by integers: a float's bits with the sign bit folded into a signed magnitude."""
    unsigned = np.dtype(f"u{np.dtype(dtype).itemsize}")
    sign_bit = 1 << (8 * unsigned.itemsize - 1)

    def ordered(value):
        bits = int(np.array(value, dtype).view(unsigned))
        return sign_bit - bits if bits >= sign_bit else bits

    return abs(ordered(got) - ordered(want))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@given(data=st.data())
def test_ulp_distance_counts_representable_floats_between(dtype, data):
    def finite_floats():  # any bit pattern (subnormals, both zeros, the extremes); non-finite -> 0
        floats = data.draw(hnp.arrays(np.dtype(f"u{np.dtype(dtype).itemsize}"), 8)).view(dtype)
        return np.where(np.isfinite(floats), floats, dtype(0))

    got, want = finite_floats(), finite_floats()
    distance = run_hlo.ulp_distance(got, want)
    assert distance.dtype == np.uint64
    assert distance.tolist() == [reference_ulp(a, b, dtype) for a, b in zip(got, want)]
    following = np.nextafter(got, dtype(np.inf))  # from -0 too: -0 and +0 are one point
    assert run_hlo.ulp_distance(got, following).tolist() == [int(value != np.finfo(dtype).max) for value in got]
    assert run_hlo.ulp_distance(np.array([-0.0, np.inf], dtype), np.array([0.0, np.finfo(dtype).max], dtype)
                                ).tolist() == [0, 1]


def test_ulp_distance_spans_the_whole_float64_range():
    largest = np.finfo(np.float64).max
    assert run_hlo.ulp_distance(np.array([-largest]), np.array([largest])).tolist() == [2 * 0x7FEFFFFFFFFFFFFF]


@given(
    got=hnp.arrays(np.float64, 12, elements=st.floats(-4, 4) | st.sampled_from([np.nan, np.inf, -np.inf, 0.0])),
    want=hnp.arrays(np.float64, 12, elements=st.floats(-4, 4) | st.sampled_from([np.nan, np.inf, -np.inf, 0.0])),
    rtol=st.sampled_from([0.0, 1e-3, 0.5]),
    atol=st.sampled_from([0.0, 1e-6, 1.0]),
)
def test_mismatches_are_the_elements_numpy_isclose_rejects(got, want, rtol, atol):
    comparison = run_hlo.compare_output(0, got, want, rtol, atol)
    expected = int(np.count_nonzero(~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)))
    assert comparison.mismatches == expected
    assert comparison.agrees == (expected == 0)
    numbers = ~(np.isnan(got) | np.isnan(want))
    assert comparison.nan_mismatches == int(np.count_nonzero(np.isnan(got) != np.isnan(want)))
    with np.errstate(invalid="ignore"):
        differences = np.abs(got[numbers] - want[numbers])
    differences[got[numbers] == want[numbers]] = 0.0  # inf == inf: no difference
    assert comparison.max_absolute == float(differences.max(initial=0.0))


def test_types_that_differ_are_reported_before_values():
    comparison = run_hlo.compare_output(0, np.zeros(3, np.float32), np.zeros(3, np.float64))
    assert not comparison.agrees
    assert "type differs: f32[3] vs f64[3]" in str(comparison)


def test_random_inputs_have_each_parameter_type_and_a_sensible_range():
    module = parse("""HloModule m
ENTRY main {
  p0 = f16[50] parameter(0)
  p1 = s8[50] parameter(1)
  p2 = u32[50] parameter(2)
  p3 = pred[50] parameter(3)
  p4 = c64[50] parameter(4)
  ROOT outputs = (f16[50], s8[50], u32[50], pred[50], c64[50]) tuple(p0, p1, p2, p3, p4)
}""")
    floats, small_signed, small_unsigned, flags, complex_values = run_hlo.random_inputs(module.entry.parameters, 1)
    assert [value.dtype for value in (floats, small_signed, small_unsigned, flags, complex_values)] == [
        np.float16, np.int8, np.uint32, np.bool_, np.complex64]
    assert 0.5 < floats.astype(np.float64).std() < 2  # standard normal (50 draws)
    assert small_signed.min() < 0 < small_signed.max() <= 8 and small_unsigned.max() <= 8
    assert 0 < flags.sum() < 50
    again = run_hlo.random_inputs(module.entry.parameters, 1)
    np.testing.assert_array_equal(again[4], complex_values)  # the seed decides
