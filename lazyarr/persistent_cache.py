"""The persistent compile cache: compiled kernels kept on disk, so a new process loads, not compiles.

A key is a hex digest the backend computes from everything the compiled bytes depend on (the
kernel's canonical HLO text, the target CPU and its features, the versions of lazyarr, llvmlite
and LLVM). An entry is one file named by its key:

    MAGIC | sha256(payload) | payload

Trust rules, as JAX's and ccache's: the directory is the user's own (created 0700; a directory
or file owned by another user, or writable by group or others, is refused with one warning and
the cache is off for the process); a file whose digest does not match its payload (truncated,
corrupted, tampered with) is deleted and the kernel compiled again, never loaded. Writers put a
whole file beside the entry and rename it into place (`_files.replace`), so concurrent processes
writing one key are safe and a reader never sees half a file. Size is bounded: when the entries
pass `max_bytes`, the least recently used (by modification time; a hit touches it) are removed.

Where: `LAZYARR_CACHE_DIR`, else platformdirs' user cache directory for lazyarr
(`~/.cache/lazyarr` on Linux). Off with `LAZYARR_FLAGS=--persistent_cache=false`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
import warnings
from collections.abc import Iterable
from pathlib import Path

from . import _files, _flags

MAGIC = b"lazyarr-cache-1\n"
_DIGEST = 32
DEFAULT_MAX_BYTES = 512 << 20
_LOG = logging.getLogger("lazyarr.cache")


def code_version(versions: str, sources: Iterable[Path]) -> str:
    """A digest of what compiled code depends on besides its own IR or HLO: `versions` (tools,
    target) and the bytes of the code generator's `sources`, so that changing either gives new
    cache keys. Every backend's keys (CPU kernels, GPU PTX, AOT objects) are made with it."""
    digest = hashlib.sha256(versions.encode())
    for path in sources:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def default_directory() -> Path:
    """`LAZYARR_CACHE_DIR`, else the platform's per-user cache directory for lazyarr."""
    configured = os.environ.get("LAZYARR_CACHE_DIR")
    if configured:
        return Path(configured)
    import platformdirs

    return Path(platformdirs.user_cache_dir("lazyarr", appauthor=False)) / "kernels"


class DiskCache:
    """Bytes by key in one directory (see the module docstring for the rules).

    >>> import tempfile
    >>> cache = DiskCache(Path(tempfile.mkdtemp()) / "c")
    >>> cache.get("ab12"), cache.put("ab12", b"code"), cache.get("ab12")
    (None, None, b'code')
    """

    def __init__(self, directory: Path, max_bytes: int = DEFAULT_MAX_BYTES):
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.hits = self.writes = self.discarded = 0
        self._lock = threading.Lock()
        self._usable: bool | None = None  # decided on first use
        self._bytes: int | None = None  # running total of entry sizes, scanned on first write

    def usable(self) -> bool:
        """Whether the directory exists (made 0700 if not) and only its owner can write it."""
        if self._usable is None:
            self._usable = self._check_directory()
        return self._usable

    def _check_directory(self) -> bool:
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            status = os.lstat(self.directory)
        except OSError as error:
            _warn(f"lazyarr: the persistent compile cache is off: cannot use {self.directory} ({error})")
            return False
        problem = _unsafe(status, "directory")
        if problem:
            _warn(f"lazyarr: the persistent compile cache is off: {self.directory} {problem}")
            return False
        return True

    def _path(self, key: str) -> Path:
        if not _is_key(key):
            raise ValueError(f"DiskCache: a key is a lowercase hex digest, got {key!r}")
        return self.directory / key

    def get(self, key: str) -> bytes | None:
        """The payload stored under `key`, or None (absent, unreadable, or failing its digest)."""
        if not self.usable():
            return None
        path = self._path(key)
        try:
            descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        with os.fdopen(descriptor, "rb") as file:
            problem = _unsafe(os.fstat(file.fileno()), "file")
            if problem:
                _warn(f"lazyarr: not loading compiled code from {path}: it {problem}")
                return None
            blob = file.read()
        payload = blob[len(MAGIC) + _DIGEST:]
        if not blob.startswith(MAGIC) or blob[len(MAGIC):len(MAGIC) + _DIGEST] != hashlib.sha256(payload).digest():
            _LOG.info("discarding corrupted cache entry %s", path)
            self.discarded += 1
            _remove(path)
            return None
        try:
            os.utime(path)  # least recently used goes first
        except OSError:
            pass
        self.hits += 1
        return payload

    def put(self, key: str, payload: bytes) -> None:
        """Store `payload` under `key` (atomically), then trim the directory to `max_bytes`."""
        if not self.usable():
            return
        blob = MAGIC + hashlib.sha256(payload).digest() + payload
        try:
            _files.replace(self._path(key), blob)
        except OSError as error:
            _LOG.info("could not write cache entry %s: %s", key, error)
            return
        self.writes += 1
        with self._lock:
            if self._bytes is None:
                self._bytes = sum(size for _, size, _ in self._entries())
            else:
                self._bytes += len(blob)
            if self._bytes > self.max_bytes:
                self._trim()

    def _entries(self) -> list[tuple[float, int, Path]]:
        entries = []
        for path in self.directory.iterdir():
            try:
                status = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode) and _is_key(path.name):  # never another file in the directory
                entries.append((status.st_mtime, status.st_size, path))
        return entries

    def _trim(self) -> None:
        """Remove the least recently used entries until the total is at most 3/4 of the bound."""
        entries = sorted(self._entries())
        total = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if total <= self.max_bytes * 3 // 4:
                break
            _remove(path)
            total -= size
        self._bytes = total

    def clear(self) -> None:
        """Remove every entry (`la.clear_cache(persistent=True)`)."""
        if self.usable():
            with self._lock:
                for _, _, path in self._entries():
                    _remove(path)
                self._bytes = 0


def _is_key(name: str) -> bool:
    """Whether `name` is an entry's name: a lowercase hex digest."""
    return bool(name) and all(character in "0123456789abcdef" for character in name)


def _unsafe(status: os.stat_result, what: str) -> str:
    """Why a directory or file may not be trusted, or '' when it may."""
    if what == "directory" and not stat.S_ISDIR(status.st_mode):
        return "is not a directory"
    if hasattr(os, "getuid") and status.st_uid != os.getuid():
        return f"belongs to another user (uid {status.st_uid})"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "is writable by group or others"
    return ""


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


_WARNED: set[str] = set()


def _warn(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


_CACHES: dict[Path, DiskCache] = {}


def disk_cache() -> DiskCache | None:
    """The process's persistent cache, or None when `--persistent_cache=false`."""
    if not _flags.FLAGS.persistent_cache:
        return None
    directory = default_directory()
    cache = _CACHES.get(directory)
    if cache is None:
        cache = _CACHES[directory] = DiskCache(directory)
    return cache


def clear_persistent_cache() -> None:
    """Delete every entry of the on-disk cache (`la.clear_cache(persistent=True)`), also when
    `--persistent_cache=false` keeps this process from using it."""
    directory = default_directory()
    if directory.is_dir():
        (_CACHES.get(directory) or DiskCache(directory)).clear()
