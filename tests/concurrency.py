"""Running a function on several threads at once in a test."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable


def run_in_threads(function: Callable, arguments: Iterable) -> None:
    """`function(argument)` for each argument, each on a thread of its own, all started before
    any is waited for."""
    threads = [threading.Thread(target=function, args=(argument,)) for argument in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
