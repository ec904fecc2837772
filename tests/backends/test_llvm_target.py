"""Target machines, the O3 pipeline and the JIT engine of lazyarr.backends.llvm.target."""

import ctypes
import platform
import re
import threading

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from lazyarr.backends.llvm import target

FLOAT = ir.FloatType()
INDEX = ir.IntType(64)


def multiply_add_module(name: str) -> ir.Module:
    """void name(float* a, float* b, float* c, float* out, i64 n): out[i] = a[i]*b[i] + c[i]."""
    module = ir.Module(name=name)
    pointer = ir.PointerType()
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [pointer] * 4 + [INDEX]), name=name)
    *arrays, count = function.args
    for array in arrays:
        array.add_attribute("noalias")
    entry, body, done = (function.append_basic_block(label) for label in ("entry", "body", "done"))
    builder = ir.IRBuilder(entry)
    builder.cbranch(builder.icmp_signed(">", count, ir.Constant(INDEX, 0)), body, done)
    builder.position_at_end(body)
    index = builder.phi(INDEX)
    index.add_incoming(ir.Constant(INDEX, 0), entry)
    a, b, c = (builder.load(builder.gep(array, [index], source_etype=FLOAT), typ=FLOAT)
               for array in arrays[:3])
    builder.store(builder.fadd(builder.fmul(a, b), c), builder.gep(arrays[3], [index], source_etype=FLOAT))
    following = builder.add(index, ir.Constant(INDEX, 1))
    index.add_incoming(following, body)
    builder.cbranch(builder.icmp_signed("<", following, count), body, done)
    builder.position_at_end(done)
    builder.ret_void()
    return module


def run_multiply_add(engine: target.JitEngine, name: str, size: int = 37):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(size).astype(np.float32) for _ in range(3))
    out = np.empty_like(a)
    signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 4, ctypes.c_int64)
    kernel = signature(engine.function_address(name))
    kernel(a.ctypes.data, b.ctypes.data, c.ctypes.data, out.ctypes.data, size)
    return out, a * b + c


def cpuinfo_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 features only")
def test_host_target_machine_has_the_cpus_avx2():
    if "avx2" not in cpuinfo_flags():
        pytest.skip("this CPU has no AVX2")
    assert "+avx2" in target.host_cpu_features().split(",")
    assert "+avx2" in target.cpu_features_key()


def test_avx512_hosts_get_full_width_vectors():
    features = target.host_cpu_features().split(",")
    if "+avx512f" not in features:
        pytest.skip("no AVX-512 on this host")
    assert "-prefer-256-bit" in features
    module = target.parse_module(multiply_add_module("wide_multiply_add"))
    target.optimize(module, target.host_target_machine())
    assert "fmul <16 x float>" in str(module)


def test_cpu_features_key_names_triple_cpu_and_features():
    triple, cpu, features = target.cpu_features_key().split("|")
    assert triple == llvm.get_process_triple()
    assert cpu == target.host_cpu_name()
    assert features == target.host_cpu_features()


def test_host_target_machine_is_shared_and_for_this_process():
    machine = target.host_target_machine()
    assert machine is target.host_target_machine()
    assert machine.triple == llvm.get_process_triple()


def test_optimize_vectorizes_a_multiply_add_loop():
    module = target.parse_module(multiply_add_module("vectorized_multiply_add"))
    target.optimize(module, target.host_target_machine())
    # The loop vectorizer widens the loads and the arithmetic (4, 8 or 16 lanes by target).
    assert re.search(r"fmul <(4|8|16) x float>", str(module)), str(module)
    assert re.search(r"fadd <(4|8|16) x float>", str(module))


def test_the_remainder_loop_is_vectorized_too():
    """Epilogue vectorization stays on (target._LLVM_OPTIONS): after the wide, interleaved vector
    loop, the remainder (up to 63 float32 elements) runs in a narrower vector loop, not element by
    element; in short rows (a 256-wide stencil) that remainder is much of the work."""
    module = target.parse_module(multiply_add_module("multiply_add_with_epilogue"))
    target.optimize(module, target.host_target_machine())
    text = str(module)
    assert re.search(r"fmul <(4|8|16) x float>", text), text
    assert len(set(re.findall(r"fmul <(\d+) x float>", text))) >= 2, text
    assert "vec.epilog" in text, text


def test_speed_level_zero_does_not_vectorize():
    module = target.parse_module(multiply_add_module("plain_multiply_add"))
    target.optimize(module, target.host_target_machine(), speed_level=0)
    assert not re.search(r"<\d+ x float>", str(module))


def test_jit_engine_runs_a_compiled_function():
    engine = target.jit_engine()
    engine.add_module(multiply_add_module("jit_multiply_add"))
    out, expected = run_multiply_add(engine, "jit_multiply_add")
    assert out.shape == expected.shape
    assert out.dtype == expected.dtype
    # No fast-math flags: mul then add, each rounded, exactly as NumPy computes it.
    np.testing.assert_array_equal(out, expected)
    assert engine is target.jit_engine()
    assert engine.has_function("jit_multiply_add")


def test_jit_engine_accepts_text_and_resolves_the_c_math_library():
    engine = target.JitEngine()
    engine.add_module("declare double @cos(double)\n"
                      "define double @call_cos(double %x) {\n"
                      "  %y = call double @cos(double %x)\n  ret double %y\n}\n")
    call_cos = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(engine.function_address("call_cos"))
    assert call_cos(0.5) == np.cos(0.5)


def test_jit_engine_errors_name_the_problem():
    engine = target.JitEngine()
    with pytest.raises(KeyError, match="no compiled function named 'missing'"):
        engine.function_address("missing")
    with pytest.raises(ValueError, match="could not parse"):
        engine.add_module("define i64 @broken( {")
    engine.add_module("define i64 @once() { ret i64 1 }")
    with pytest.raises(ValueError, match="already defined: once"):
        engine.add_module("define i64 @once() { ret i64 2 }")
    with pytest.raises(TypeError, match="expected IR text"):
        engine.add_module(42)


def test_fresh_names_are_unique_in_the_engine():
    engine = target.JitEngine()
    engine.add_module("define i64 @kernel_1() { ret i64 1 }")
    names = [engine.fresh_name() for _ in range(3)]
    assert names == ["kernel_0", "kernel_2", "kernel_3"]
    assert engine.fresh_name("fusion") == "fusion_4"


def test_jit_engine_adds_modules_from_many_threads():
    engine = target.JitEngine()
    names = [f"threaded_multiply_add_{number}" for number in range(6)]
    errors = []

    def add(name):
        try:
            engine.add_module(multiply_add_module(name))
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=add, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for name in names:
        out, expected = run_multiply_add(engine, name, size=9)
        np.testing.assert_array_equal(out, expected)


def test_an_engine_given_the_shared_machine_leaves_it_usable():
    engine = target.JitEngine(target.host_target_machine())
    engine.add_module("define i64 @short_lived() { ret i64 3 }")
    del engine
    import gc

    gc.collect()
    module = target.parse_module(multiply_add_module("after_engine_multiply_add"))
    target.optimize(module, target.host_target_machine())  # would crash on a disposed machine
    assert "define" in str(module)


def test_object_cache_hooks_see_and_supply_object_code():
    saved = {}
    first = target.JitEngine()
    first.set_object_cache(notify=lambda module, code: saved.__setitem__(module.name, code))
    first.add_module(multiply_add_module("cached_multiply_add"))
    assert len(saved["cached_multiply_add"]) > 0  # the object file the module compiled to
    asked = []
    second = target.JitEngine()
    second.set_object_cache(get_buffer=lambda module: asked.append(module.name) or saved.get(module.name))
    second.add_module(multiply_add_module("cached_multiply_add"))
    assert "cached_multiply_add" in asked
    out, expected = run_multiply_add(second, "cached_multiply_add")
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("triple, instruction", [("x86_64-unknown-linux-gnu", "ret"),
                                                  ("aarch64-unknown-linux-gnu", "ret")])
def test_target_machine_for_cross_targets_emits_assembly(triple, instruction):
    try:
        machine = target.target_machine_for(triple)
    except ValueError as error:
        pytest.skip(f"llvmlite was built without this target: {error}")
    module = target.parse_module(multiply_add_module("cross_multiply_add"))
    target.optimize(module, machine)
    assembly = machine.emit_assembly(module)
    assert module.triple == triple
    assert instruction in assembly


def test_target_machine_for_rejects_unknown_triples():
    with pytest.raises(ValueError, match="unknown triple 'nonsense-cpu-none'"):
        target.target_machine_for("nonsense-cpu-none")


def test_loop_strength_reduction_is_off_for_host_code_and_on_inside_its_block():
    """Host code generation leaves loop strength reduction out (target._LLVM_OPTIONS: its costliest
    pass, the code as fast); `loop_strength_reduction()` (PTX's) turns it on for its block only,
    also when the block raises."""
    def assembly() -> str:
        module = target.parse_module(multiply_add_module("strength_reduced_multiply_add"))
        machine = target.host_target_machine()
        target.optimize(module, machine)
        return machine.emit_assembly(module)

    without = assembly()
    with target.loop_strength_reduction():
        reduced = assembly()
    assert reduced != without
    with pytest.raises(RuntimeError), target.loop_strength_reduction():
        raise RuntimeError("inside the block")
    assert assembly() == without
