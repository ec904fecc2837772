"""The persistent compile cache (lazyarr/persistent_cache.py): a second process loads, never compiles;
a damaged or untrusted entry is never loaded.

The suite runs with the cache off (tests/conftest.py); these tests turn it on, each in a
directory of its own, in this process or in subprocesses that run one small program twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _flags
from lazyarr.persistent_cache import MAGIC, DiskCache

pytestmark = pytest.mark.usefixtures("cpu_backend")  # tests/conftest.py

PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import lazyarr as la
    x = la.asarray(np.linspace(-3, 3, 1000, dtype=np.float32))
    total, curve = la.eval((la.exp(x) * la.sin(x) + x).sum(), la.tanh(x * 0.3) - x)
    info = la.cache_info()
    print(json.dumps({"compiled": info.kernels_compiled, "loaded": info.kernels_loaded,
                      "total": float(total), "curve": np.asarray(curve).tobytes().hex()}))
""")


def run_program(cache_directory) -> dict:
    environment = {**os.environ, "LAZYARR_CACHE_DIR": str(cache_directory), "LAZYARR_FLAGS": "--backend=cpu"}
    result = subprocess.run([sys.executable, "-c", PROGRAM], env=environment, capture_output=True, text=True,
                            timeout=300, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_every_kernel_and_gets_the_same_bits(tmp_path):
    first = run_program(tmp_path / "cache")
    second = run_program(tmp_path / "cache")
    assert first["compiled"] >= 1 and first["loaded"] == 0
    assert second["compiled"] == 0 and second["loaded"] == first["compiled"]
    assert (second["total"], second["curve"]) == (first["total"], first["curve"])
    assert oct(os.stat(tmp_path / "cache").st_mode & 0o777) == oct(0o700)


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "empty", "no magic"])
def test_a_damaged_entry_is_discarded_and_compiled_again(tmp_path, damage):
    first = run_program(tmp_path / "cache")
    entries = sorted((tmp_path / "cache").iterdir())
    assert len(entries) == first["compiled"]
    victim = entries[0]
    data = bytearray(victim.read_bytes())
    if damage == "flip a byte":
        data[-100] ^= 0x40
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = bytearray()
    else:
        data[:len(MAGIC)] = b"x" * len(MAGIC)
    victim.write_bytes(bytes(data))
    second = run_program(tmp_path / "cache")
    assert second["compiled"] == 1 and second["loaded"] == first["compiled"] - 1
    assert (second["total"], second["curve"]) == (first["total"], first["curve"])
    assert len(victim.read_bytes()) > len(MAGIC) + 32  # rewritten whole


def test_in_process_clear_cache_then_compile_loads_from_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("LAZYARR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)  # restored after the test
    _flags.with_overrides(persistent_cache=True)
    values = np.arange(-5, 5, dtype=np.float64)
    la.clear_cache()
    expected = np.asarray(la.cosh(la.asarray(values)) / 3 + 1)
    compiled = la.cache_info().kernels_compiled
    assert compiled >= 1
    la.clear_cache()
    again = np.asarray(la.cosh(la.asarray(values)) / 3 + 1)
    assert la.cache_info().kernels_compiled == 0 and la.cache_info().kernels_loaded == compiled
    np.testing.assert_array_equal(again, expected)
    la.clear_cache()


def test_disk_cache_round_trip_rejects_bad_keys_and_symlinks(tmp_path):
    cache = DiskCache(tmp_path / "c")
    assert cache.get("00ff") is None
    cache.put("00ff", b"object code")
    assert cache.get("00ff") == b"object code" and cache.hits == 1
    with pytest.raises(ValueError, match="hex digest"):
        cache.get("../escape")
    (tmp_path / "elsewhere").write_bytes(MAGIC + b"\0" * 32 + b"planted")
    os.symlink(tmp_path / "elsewhere", tmp_path / "c" / "abcd")
    assert cache.get("abcd") is None  # a link is never followed


def test_an_untrusted_directory_turns_the_cache_off_with_one_warning(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(0o777)
    cache = DiskCache(directory)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.get("00") is None
        cache.put("00", b"code")
        assert cache.get("00") is None
    assert [str(warning.message) for warning in caught] == [
        f"lazyarr: the persistent compile cache is off: {directory} is writable by group or others"
    ]
    assert list(directory.iterdir()) == []


def test_a_group_writable_entry_is_not_loaded(tmp_path):
    cache = DiskCache(tmp_path / "c")
    cache.put("0a", b"code")
    (tmp_path / "c" / "0a").chmod(0o666)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        assert cache.get("0a") is None


def test_the_least_recently_used_entries_go_first_beyond_the_bound(tmp_path):
    cache = DiskCache(tmp_path / "c", max_bytes=4000)
    for number in range(4):  # 4 entries of 900 bytes and a 48-byte header: within the bound
        cache.put(f"{number:02x}", bytes(900))
        os.utime(tmp_path / "c" / f"{number:02x}", (number, number))  # distinct ages
    cache.get("00")  # touched: now the most recent
    cache.put("ff", bytes(900))  # over the bound: trimmed to 3/4 of it, oldest first
    remaining = sorted(path.name for path in (tmp_path / "c").iterdir())
    total = sum((tmp_path / "c" / name).stat().st_size for name in remaining)
    assert total <= 3000 and remaining == ["00", "03", "ff"]


def test_a_directory_or_entry_of_another_user_is_refused_with_one_warning(tmp_path, monkeypatch):
    """The owner check (as a foreign owner is seen from this process: another uid than ours)."""
    cache = DiskCache(tmp_path / "c")
    cache.put("0b", b"code")  # written while it is still ours
    foreign = os.getuid() + 1
    monkeypatch.setattr(os, "getuid", lambda: foreign)
    with pytest.warns(RuntimeWarning, match="belongs to another user"):
        assert DiskCache(tmp_path / "c").get("0b") is None  # the directory is refused: cache off
    entry_only = DiskCache(tmp_path / "c")
    entry_only._usable = True  # a directory that passed its check, holding another user's file
    with pytest.warns(RuntimeWarning, match="belongs to another user"):
        assert entry_only.get("0b") is None


def test_clear_cache_persistent_deletes_the_disk_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("LAZYARR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)  # restored after the test
    _flags.with_overrides(persistent_cache=True)
    la.clear_cache()
    values = np.linspace(-2, 2, 9)
    expected = np.asarray(la.sinh(la.asarray(values)) * 3 - 1)
    assert la.cache_info().kernels_compiled >= 1 and any((tmp_path / "cache").iterdir())
    (tmp_path / "cache" / "notes.txt").write_text("not an entry")  # LAZYARR_CACHE_DIR may hold other files
    la.clear_cache(persistent=True)
    assert [path.name for path in (tmp_path / "cache").iterdir()] == ["notes.txt"]
    again = np.asarray(la.sinh(la.asarray(values)) * 3 - 1)
    assert la.cache_info().kernels_loaded == 0 and la.cache_info().kernels_compiled >= 1  # compiled anew
    np.testing.assert_array_equal(again, expected)
    la.clear_cache()


def test_two_processes_filling_one_cache_at_once_both_get_the_same_bits(tmp_path):
    """Both compile the same kernels at the same time and write the same entries (each writes a
    whole file beside the entry and renames it into place); a third process loads them all."""
    environment = {**os.environ, "LAZYARR_CACHE_DIR": str(tmp_path / "cache"), "LAZYARR_FLAGS": "--backend=cpu"}
    racers = [subprocess.Popen([sys.executable, "-c", PROGRAM], env=environment, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for racer in racers:
        output, errors = racer.communicate(timeout=300)
        assert racer.returncode == 0, errors
        results.append(json.loads(output.strip().splitlines()[-1]))
    third = run_program(tmp_path / "cache")
    assert third["compiled"] == 0 and third["loaded"] >= 1
    assert len({(result["total"], result["curve"]) for result in [*results, third]}) == 1
    assert not [path for path in (tmp_path / "cache").iterdir() if path.name.startswith(".")]  # no leftovers


def test_gpu_ptx_is_kept_and_loaded_and_a_damaged_entry_is_generated_again(tmp_path, monkeypatch):
    """The GPU backend's PTX goes to the same cache (no GPU needed to make it): a module compiled
    again loads its PTX instead of generating it, the same text; a damaged entry is generated
    again, never loaded; with the cache off nothing is written."""
    from lazyarr.backends import gpu_compile
    from lazyarr.hlo import Computation, Module, make

    def module():
        x = make("parameter", number=0, shape=(64,), dtype=np.dtype(np.float32))
        return Module("m", Computation("m", (x,), (make("exp", [make("negate", [x])]),)))

    monkeypatch.setenv("LAZYARR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)  # restored after the test
    _flags.with_overrides(persistent_cache=False)
    assert gpu_compile.compile_program(module(), "sm_90").ptx_loaded is False
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    _flags.with_overrides(persistent_cache=True)
    first = gpu_compile.compile_program(module(), "sm_90")
    again = gpu_compile.compile_program(module(), "sm_90")
    assert (first.ptx_loaded, again.ptx_loaded) == (False, True)
    assert again.ptx == first.ptx and ".entry" in again.ptx
    (entry,) = [path for path in (tmp_path / "cache").iterdir() if path.is_file()]
    entry.write_bytes(entry.read_bytes()[:-20])  # truncated
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        damaged = gpu_compile.compile_program(module(), "sm_90")
    assert damaged.ptx_loaded is False and damaged.ptx == first.ptx
    assert gpu_compile.compile_program(module(), "sm_90").ptx_loaded is True  # written whole again


def test_aot_objects_are_kept_per_target_and_loaded(tmp_path, monkeypatch):
    """`la.aot` builds go through the same cache: building the same module for the same target
    again emits nothing and writes the same object; another CPU is another entry."""
    from lazyarr import aot
    from lazyarr.backends.llvm import aot_entry
    from lazyarr.hlo import text

    monkeypatch.setenv("LAZYARR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)  # restored after the test
    _flags.with_overrides(persistent_cache=True)
    emitted = []
    emit = aot_entry.emit_object
    monkeypatch.setattr(aot_entry, "emit_object", lambda *args: emitted.append(args) or emit(*args))
    module = text.parse("HloModule m\nENTRY main {\n  p0 = f32[3] parameter(0)\n  ROOT e = f32[3] exp(p0)\n}")
    first = aot.compile_module(module, "exp3", output_dir=tmp_path / "a")
    again = aot.compile_module(text.parse(text.print_module(module)), "exp3", output_dir=tmp_path / "b")
    assert len(emitted) == 1
    with open(first.object_path, "rb") as one, open(again.object_path, "rb") as other:
        assert one.read() == other.read()
    aot.compile_module(module, "exp3", output_dir=tmp_path / "c", cpu="native")
    assert len(emitted) == 2  # another CPU: compiled, not the generic CPU's object
