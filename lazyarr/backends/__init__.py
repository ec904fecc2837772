"""Backends compile a Module into an Executable; found by name and imported lazily."""

from .base import Backend, Executable, available_backends, get_backend

__all__ = ["Backend", "Executable", "available_backends", "get_backend"]
