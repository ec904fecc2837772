"""Files lazyarr writes and errors it raises on bad input: --dump_to files are created new (no
symlink followed, no other process's dump overwritten), an unwritable --dump_to warns once and
evaluation goes on, an array too large for memory and a Python int beyond 64 bits are refused
in the user's terms. (The same file rules for `la.aot` and `la.profile` are tested in
test_aot.py and test_profile.py.)"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _files, _flags, introspection

REPOSITORY = Path(__file__).resolve().parent.parent


@pytest.fixture
def dump_to(monkeypatch):
    """dump_to(path): --dump_to=path on the interpreter for this test, numbering from 0 as in a
    fresh process, with an empty compile cache (dumps are written when compiling)."""

    def configure(path):
        monkeypatch.setattr(_flags, "FLAGS", _flags.FLAGS)  # restored after the test
        _flags.with_overrides(dump_to=str(path), backend="interpreter")
        monkeypatch.setattr(introspection, "_MODULE_NUMBERS", itertools.count())
        la.clear_cache()

    return configure


def evaluate_something():
    return float((la.arange(6.0) * 3).sum())


# ----------------------------------------------------------------------------- --dump_to


def test_a_symlink_planted_at_a_dump_name_is_not_followed(tmp_path, dump_to):
    directory, victim = tmp_path / "dumps", tmp_path / "victim.txt"
    directory.mkdir()
    victim.write_text("precious\n")
    planted = directory / "module_0000.main.before_optimizations.txt"
    planted.symlink_to(victim)
    dump_to(directory)
    assert evaluate_something() == 45.0
    assert victim.read_text() == "precious\n"
    assert planted.is_symlink()
    # The module took the next free number instead.
    assert "HloModule main" in (directory / "module_0001.main.before_optimizations.txt").read_text()


def test_a_dangling_symlink_is_not_followed_either(tmp_path, dump_to):
    directory, target = tmp_path / "dumps", tmp_path / "created-through-the-link.txt"
    directory.mkdir()
    (directory / "module_0000.main.before_optimizations.txt").symlink_to(target)
    dump_to(directory)
    evaluate_something()
    assert not target.exists()


DUMPING_PROCESS = """
import lazyarr as la
(la.arange(6.0) * 3).sum().eval()
(la.arange(5.0) - 1).eval()
"""


def test_two_processes_dumping_into_one_directory_keep_each_others_files(tmp_path):
    directory = tmp_path / "dumps"
    environment = dict(os.environ, LAZYARR_FLAGS=f"--backend=interpreter --dump_to={directory}")
    processes = [subprocess.Popen([sys.executable, "-c", DUMPING_PROCESS], cwd=REPOSITORY, env=environment,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for process in processes:
        assert process.wait(timeout=120) == 0, process.stderr.read()
        process.stderr.close()
    before = sorted(directory.glob("module_*.main.before_optimizations.txt"))
    assert len(before) == 4  # two modules from each process, each under its own number
    assert sum("reduce" in path.read_text() for path in before) == 2  # the sum, once per process
    for path in before:  # each module's files share its number, one of each stage
        assert path.with_name(path.name.replace("before_", "after_")).exists()


@pytest.mark.parametrize(("kind", "reason"), [
    ("a file", "File exists"), ("under a file", "Not a directory"), ("read-only", "Permission denied"),
])
def test_a_bad_dump_path_warns_once_and_evaluation_goes_on(tmp_path, dump_to, kind, reason):
    a_file = tmp_path / "not-a-directory"
    a_file.write_text("")
    path = {"a file": a_file, "under a file": a_file / "dumps", "read-only": tmp_path / "read-only"}[kind]
    if kind == "read-only":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories")
        path.mkdir(mode=0o500)
    dump_to(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert evaluate_something() == 45.0
        assert float((la.arange(4.0) + 1).sum()) == 10.0  # a second module: no second warning
    messages = [str(warning.message) for warning in caught]
    assert len(messages) == 1, messages
    assert f"--dump_to={path}" in messages[0] and reason in messages[0]
    if kind == "read-only":
        assert list(path.iterdir()) == []


def test_create_new_refuses_an_existing_name_and_replace_swaps_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    link = tmp_path / "link"
    link.symlink_to(victim)
    with pytest.raises(FileExistsError):
        _files.create_new(link, "new")
    _files.replace(link, b"new")
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and link.read_bytes() == b"new"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["link", "victim"]  # no temporary left


# ------------------------------------------------------------------------- bad input


def test_an_array_too_large_for_memory_is_named_in_the_users_terms():
    # 10**14 float64 are 728 TiB: more than a 64-bit process's address space (128 TiB).
    with pytest.raises(MemoryError) as caught:
        la.zeros(10**14).eval()
    message = str(caught.value)
    with pytest.raises(MemoryError) as numpy_caught:
        np.zeros(10**14)
    assert message == str(numpy_caught.value)
    assert message == "Unable to allocate 728. TiB for an array with shape (100000000000000,) and data type float64"


@pytest.mark.parametrize("value", [2**70, -(2**63) - 1, 2**64, [1, 2**70], [[1.5], [-(2**80)]]])
def test_a_python_int_beyond_64_bits_is_refused_by_name(value):
    with pytest.raises(OverflowError, match=r"Python integer -?\d+ does not fit in int64 or uint64"):
        la.asarray(value)


def test_python_ints_at_the_64_bit_limits_still_convert():
    assert la.asarray(2**64 - 1).dtype == np.uint64
    assert la.asarray(-(2**63)).dtype == np.int64
    assert la.asarray(float(2**70)).dtype == np.float64
