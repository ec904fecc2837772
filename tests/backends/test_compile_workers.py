"""Kernels compiled by helper processes (llvm/compile_workers.py) are the kernels the process makes."""

import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import lazyarr as la
from lazyarr import _flags
from lazyarr.backends.llvm import compile_workers, target
from tests.backends.test_llvm_target import multiply_add_module
from tests.concurrency import run_in_threads


def multiply_add_text(name: str) -> str:
    return str(multiply_add_module(name))


def scripted_helper(script: str) -> compile_workers._Helper:
    """A helper whose process runs `script` (Python) instead of the compile worker, once it
    has said it is ready: a misbehaving helper, for the tests below."""
    scripted = compile_workers._Helper.__new__(compile_workers._Helper)
    scripted.process = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, bufsize=0)
    scripted.lock, scripted.alive, scripted.served = threading.Lock(), True, 0
    assert scripted.process.stdout.read(1) == compile_workers.READY
    return scripted


@pytest.fixture
def helper():
    """One started, ready helper; stopped afterwards, so other tests start their own."""
    compile_workers.stop_helpers()
    (started,) = compile_workers._helpers(1)
    assert started.ready.wait(60), "the compile helper did not start"
    yield started
    compile_workers.stop_helpers()


def test_a_helper_makes_the_same_object_code_as_the_process(helper):
    text = multiply_add_text("helper_multiply_add")
    with helper.lock:
        assert helper.compile(text) == target.compile_object(text)


@pytest.fixture(autouse=True)
def share_unused(monkeypatch):
    """Each test starts with the process's share of kernels unused, whatever ran before it."""
    monkeypatch.setattr(compile_workers, "_COMPILED_HERE", [0])


@pytest.fixture
def share_used(monkeypatch):
    """This process has compiled its share of kernels: batches go to the helpers."""
    monkeypatch.setattr(compile_workers, "_COMPILED_HERE", [compile_workers._KERNELS_HERE])


def test_compile_objects_keeps_the_order_of_its_texts(helper, share_used):
    texts = [multiply_add_text(f"ordered_{index}") for index in range(12)]
    # Every text differs (its function's name), so a result in the wrong place would not match.
    assert compile_workers.compile_objects(texts, workers=1) == [target.compile_object(text) for text in texts]
    assert helper.served > 0  # the helper took part


def test_a_dead_helper_is_dropped_and_its_kernels_compiled_here(helper, share_used):
    helper.process.kill()
    helper.process.wait()
    texts = [multiply_add_text(f"after_death_{index}") for index in range(3)]
    assert compile_workers.compile_objects(texts, workers=1) == [target.compile_object(text) for text in texts]
    with helper.lock:
        assert helper.compile(texts[0]) is None
    assert not helper.alive


@pytest.mark.parametrize("broken_at", [0, 1, 5])
def test_bad_ir_raises_the_processes_own_error(helper, share_used, broken_at):
    """Whoever takes the broken text (this thread, or the helper whose thread then compiles it
    here to get the real error), compile_objects raises ValueError as compile_object does."""
    texts = [multiply_add_text(f"fine_{index}") for index in range(6)]
    texts[broken_at] = "define void @broken( {"
    with pytest.raises(ValueError, match="could not parse"):
        compile_workers.compile_objects(texts, workers=1)
    assert helper.alive  # a helper reports an error; it does not die of it


def test_programs_compiled_with_helpers_match_numpy(helper, share_used):
    """A module of several new kernels (each `exp`/`tanh`/`log` chain its own) through helpers."""
    previous = _flags.FLAGS
    _flags.with_overrides(compile_workers=1)
    try:
        la.clear_cache()
        x = np.linspace(0.5, 3.0, 4099, dtype=np.float32)
        lazy = la.asarray(x)
        results = la.eval(la.exp(lazy).sum(), la.tanh(lazy) * 2, la.log(lazy)[::-1], lazy.max() - lazy)
        expected = (np.exp(x).sum(), np.tanh(x) * 2, np.log(x)[::-1], x.max() - x)
        for result, reference in zip(results, expected):
            # float32 elementwise functions within 1 ulp (llvm math tables); the sum's order differs
            np.testing.assert_allclose(np.asarray(result), reference, rtol=2e-6 if np.ndim(reference) else 1e-5)
        assert la.cache_info().kernels_compiled >= 2
        assert helper.served > 0
    finally:
        _flags.FLAGS = previous


def _report_default_count(queue):
    queue.put(compile_workers.default_worker_count())


def test_no_helpers_inside_daemonic_processes():
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    queue = context.Queue()
    process = context.Process(target=_report_default_count, args=(queue,), daemon=True)
    process.start()
    assert queue.get(timeout=60) == 0
    process.join(60)
    assert compile_workers.default_worker_count() == max(1, min(4, os.cpu_count() or 1))


def test_compile_workers_flag_parses():
    assert _flags.parse_flags("--compile_workers=0").compile_workers == 0
    assert _flags.parse_flags("").compile_workers == -1


def test_an_answer_for_another_request_is_never_used():
    """A helper out of step with its requests (here: one that answers with another text's digest)
    is dropped; its bytes are not taken for the kernel."""
    script = (
        "import sys, struct\n"
        "out = sys.stdout.buffer; out.write(b'R'); out.flush()\n"
        "while True:\n"
        "    head = sys.stdin.buffer.read(4)\n"
        "    if len(head) < 4: break\n"
        "    sys.stdin.buffer.read(struct.unpack('>I', head)[0])\n"
        "    out.write(struct.pack('>BI', 0, 4) + bytes(32) + b'junk'); out.flush()\n"
    )
    impostor = scripted_helper(script)
    with impostor.lock:
        assert impostor.compile(multiply_add_text("impostor")) is None
    assert not impostor.alive
    compile_workers._reap(impostor)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_leaves_its_parents_helpers_alone(helper):
    pid = os.fork()
    if pid == 0:  # the child: the parent's helpers are forgotten and their pipes closed here
        os._exit(0 if compile_workers._POOL["helpers"] == [] and helper.process.stdin.closed else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    text = multiply_add_text("after_fork")
    with helper.lock:
        assert helper.compile(text) == target.compile_object(text)  # the parent's pipes still work


def test_a_hung_helper_is_killed_and_its_kernel_compiled_here(monkeypatch):
    """A helper that never answers (here: one that reads its request and sleeps) does not hang
    the evaluation: after the answer timeout it is killed and the kernel compiled here."""
    script = (
        "import sys, time\n"
        "out = sys.stdout.buffer; out.write(b'R'); out.flush()\n"
        "sys.stdin.buffer.read(4); time.sleep(600)\n"
    )
    monkeypatch.setattr(compile_workers, "_ANSWER_SECONDS", 0.5)
    sleeper = scripted_helper(script)
    with sleeper.lock:
        assert sleeper.compile(multiply_add_text("hung")) is None
    assert not sleeper.alive
    assert sleeper.process.wait(10) is not None  # killed, not left running
    compile_workers._reap(sleeper)


def test_once_a_helper_is_ready_this_process_compiles_nothing(helper, monkeypatch):
    """Kernels compile in helpers, never here, once one is ready and this process has compiled
    its share (LLVM's context would keep ~0.3 MiB of each here for the process's whole life):
    batches of several and of one."""
    monkeypatch.setattr(compile_workers, "_COMPILED_HERE", [compile_workers._KERNELS_HERE])
    here = []
    real = compile_workers.compile_object
    monkeypatch.setattr(compile_workers, "compile_object", lambda text: here.append(text) or real(text))
    texts = [multiply_add_text(f"away_{index}") for index in range(5)]
    assert compile_workers.compile_objects(texts, workers=1) == [target.compile_object(text) for text in texts]
    single = [multiply_add_text("away_single")]
    assert compile_workers.compile_objects(single, workers=1) == [target.compile_object(single[0])]
    assert here == [] and helper.served == 6


def test_a_helper_is_replaced_after_its_share_of_kernels(helper, monkeypatch):
    monkeypatch.setattr(compile_workers, "_KERNELS_PER_HELPER", 3)
    monkeypatch.setattr(compile_workers, "_COMPILED_HERE", [compile_workers._KERNELS_HERE])  # helpers take all
    texts = [multiply_add_text(f"share_{index}") for index in range(4)]
    assert compile_workers.compile_objects(texts, workers=1) == [target.compile_object(text) for text in texts]
    assert not helper.alive and helper.process.wait(10) == 0  # retired after its batch: it ends
    (fresh,) = compile_workers._helpers(1)
    assert fresh is not helper and fresh.process.pid != helper.process.pid
    assert helper.process.stdout.closed and helper.process.returncode == 0  # reaped, pipes closed
    more = [multiply_add_text(f"share_more_{index}") for index in range(2)]
    assert compile_workers.compile_objects(more, workers=1) == [target.compile_object(text) for text in more]


def test_a_helper_never_imports_from_the_current_directory(tmp_path, monkeypatch):
    """Started from a directory holding another `lazyarr`, a helper still runs this one."""
    fake = tmp_path / "lazyarr" / "backends" / "llvm"
    fake.mkdir(parents=True)
    for folder in (tmp_path / "lazyarr", tmp_path / "lazyarr" / "backends", fake):
        (folder / "__init__.py").write_text("")
    marker = tmp_path / "the-impostor-ran"
    (fake / "compile_worker.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(tmp_path)
    compile_workers.stop_helpers()
    try:
        (started,) = compile_workers._helpers(1)
        assert started.ready.wait(60)
        text = multiply_add_text("from_elsewhere")
        with started.lock:
            assert started.compile(text) == target.compile_object(text)
        assert not marker.exists()
    finally:
        compile_workers.stop_helpers()


def test_processes_started_by_a_process_with_helpers_compile_in_themselves(monkeypatch):
    """Worker processes (concurrent.futures, multiprocessing, dask's process scheduler) inherit
    the owner variable: by default they start no helpers of their own."""
    monkeypatch.setenv(compile_workers._OWNER_VARIABLE, str(os.getpid() + 1))
    assert compile_workers.default_worker_count() == 0
    monkeypatch.setenv(compile_workers._OWNER_VARIABLE, str(os.getpid()))
    assert compile_workers.default_worker_count() == max(1, min(4, os.cpu_count() or 1))


def test_this_process_compiles_beside_the_helpers_up_to_its_share(helper, monkeypatch):
    """A short program's first batches use this thread too, up to `_KERNELS_HERE` kernels."""
    monkeypatch.setattr(compile_workers, "_KERNELS_HERE", 2)
    monkeypatch.setattr(compile_workers, "_COMPILED_HERE", [0])
    texts = [multiply_add_text(f"share_here_{index}") for index in range(8)]
    assert compile_workers.compile_objects(texts, workers=1) == [target.compile_object(text) for text in texts]
    assert compile_workers._COMPILED_HERE[0] <= 2 and helper.served + compile_workers._COMPILED_HERE[0] == 8


def test_while_it_has_its_share_this_thread_compiles_a_batchs_first_text(helper, monkeypatch):
    """Without threads compiling here (an llvmlite that thread_compile.py cannot use), a ready
    helper takes nothing from a batch that fits in the process's share: a batch of one compiles
    here without a round trip, and no thread starts for it or for a batch of two."""
    monkeypatch.setattr(compile_workers, "_COMPILED_HERE", [0])
    monkeypatch.setattr(compile_workers.thread_compile, "available", lambda: False)
    here = []
    real = compile_workers.compile_object
    monkeypatch.setattr(compile_workers, "compile_object", lambda text: here.append(text) or real(text))
    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda thread: started.append(thread) or real_start(thread))
    for attempt in range(5):  # a helper that raced for the only text would win some of these
        single = [multiply_add_text(f"first_single_{attempt}")]
        assert compile_workers.compile_objects(single, workers=1) == [target.compile_object(single[0])]
    assert helper.served == 0 and started == [] and compile_workers._COMPILED_HERE[0] == 5
    pair = [multiply_add_text(f"first_of_two_{index}") for index in range(2)]
    assert compile_workers.compile_objects(pair, workers=1) == [target.compile_object(text) for text in pair]
    assert pair[0] in here and pair[1] in here and started == [] and helper.served == 0


def test_the_share_compiles_on_threads_here_and_helpers_start_only_past_it(monkeypatch):
    """A process's first `_KERNELS_HERE` kernels compile on its own threads (no helper started:
    a short program never pays for one); the batch that does not fit starts the helpers and,
    while none is ready, compiles here too; later batches go to the ready helper."""
    compile_workers.stop_helpers()
    monkeypatch.setattr(compile_workers, "_KERNELS_HERE", 6)
    monkeypatch.setattr(compile_workers, "_COMPILED_HERE", [0])
    threaded = []
    real = compile_workers.thread_compile.compile_object_concurrently
    monkeypatch.setattr(compile_workers.thread_compile, "compile_object_concurrently",
                        lambda text: threaded.append(text) or real(text))
    try:
        first = [multiply_add_text(f"share_thread_{index}") for index in range(4)]
        assert compile_workers.compile_objects(first, workers=1) == [target.compile_object(text) for text in first]
        assert sorted(threaded) == sorted(first) and compile_workers._POOL["helpers"] == []  # no helper started
        past = [multiply_add_text(f"share_past_{index}") for index in range(5)]  # 2 fit in the share
        assert compile_workers.compile_objects(past, workers=1) == [target.compile_object(text) for text in past]
        (started,) = compile_workers._POOL["helpers"]  # started by the batch that did not fit
        assert started.ready.wait(60)
        assert sorted(threaded) == sorted(first + past)  # none was ready: all of it here
        later = [multiply_add_text(f"share_later_{index}") for index in range(3)]
        assert compile_workers.compile_objects(later, workers=1) == [target.compile_object(text) for text in later]
        assert sorted(threaded) == sorted(first + past) and started.served == 3
    finally:
        compile_workers.stop_helpers()


def test_a_batch_past_the_share_goes_to_a_ready_helper_and_the_share_is_counted_once(helper, monkeypatch):
    """Two threads evaluating at once share one count: exactly `_KERNELS_HERE` kernels compile
    here on the threads, the rest (the part of a batch past the share) elsewhere: in the ready
    helper, or, for the batch that found it busy with the other, on the calling thread."""
    monkeypatch.setattr(compile_workers, "_KERNELS_HERE", 4)
    batches = [[multiply_add_text(f"contended_{thread}_{index}") for index in range(5)] for thread in range(2)]
    results = {}

    def evaluate(thread):
        results[thread] = compile_workers.compile_objects(batches[thread], workers=1)

    run_in_threads(evaluate, range(2))
    for thread in range(2):
        assert results[thread] == [target.compile_object(text) for text in batches[thread]]
    assert compile_workers._COMPILED_HERE[0] == 4 and helper.served >= 3


def test_processes_started_by_a_short_program_start_no_helpers(monkeypatch):
    """The owner variable is set by the first compile, not only when helpers start: a worker
    process started by a program that compiled a few kernels on its threads starts none."""
    monkeypatch.delenv(compile_workers._OWNER_VARIABLE, raising=False)
    monkeypatch.setattr(compile_workers, "_KERNELS_HERE", 64)
    compile_workers.compile_objects([multiply_add_text("owner_mark")], workers=1)
    assert os.environ[compile_workers._OWNER_VARIABLE] == str(os.getpid())
    assert compile_workers._POOL["helpers"] == [] or compile_workers._POOL["pid"] != os.getpid()


def test_a_batch_straddling_the_share_is_shared_by_the_threads_and_a_ready_helper(helper, monkeypatch):
    """The threads take what is left of the share and the helper the rest, from one queue."""
    monkeypatch.setattr(compile_workers, "_KERNELS_HERE", 2)
    texts = [multiply_add_text(f"straddle_{index}") for index in range(10)]
    assert compile_workers.compile_objects(texts, workers=1) == [target.compile_object(text) for text in texts]
    assert compile_workers._COMPILED_HERE[0] == 2 and helper.served == 8
