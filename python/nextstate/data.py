"""Datasets and splits written by the C side (``nextstate data build``,
``nextstate split``) as NumPy arrays, memory-mapped (zero-copy) by default.

A dataset directory holds ``manifest.json`` and one ``.npy`` per array
(``states`` uint64 [N, words], ``transitions`` int32 [T, 4], …); a split
directory holds ``split.json`` and ``train``/``dev``/``test``/``pools``
arrays of (dataset, transition) references."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

import numpy as np

from ._core import NextstateError

DATASET_ARRAYS = ("states", "state_problem", "state_g", "state_hstar", "transitions", "transition_optimal",
                  "applicable_offsets", "applicable_ops", "plan_offsets", "plan_transitions", "plan_problem")
SPLIT_ARRAYS = ("train", "dev", "test", "pools")


def load_array(path: str | os.PathLike, mmap: bool = True) -> np.ndarray:
    """One ``.npy`` file (memory-mapped read-only when ``mmap``); raises
    NextstateError naming the file when it is missing or not an array."""
    p = os.fspath(path)
    try:
        a = np.load(p, mmap_mode="r" if mmap else None, allow_pickle=False)
    except FileNotFoundError:
        raise NextstateError(f"{p}: no such file") from None
    except (ValueError, OSError) as e:
        raise NextstateError(f"{p}: not a NumPy array file: {e}") from None
    if not isinstance(a, np.ndarray):
        raise NextstateError(f"{p}: not a single NumPy array")
    return a


def _manifest(path: str) -> Dict[str, Any]:
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise NextstateError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise NextstateError(f"{path}:{e.lineno}:{e.colno}: {e.msg}") from None


class Dataset:
    """A dataset directory: ``manifest`` (the parsed manifest.json),
    ``problems`` (its per-problem records: name, file, state_offset, states,
    atoms, operators, …) and each array as an attribute (``ds.states``,
    ``ds.transitions``, …), loaded on first use."""

    def __init__(self, directory: str | os.PathLike, mmap: bool = True) -> None:
        self.dir = os.fspath(directory)
        self.mmap = mmap
        self.manifest = _manifest(os.path.join(self.dir, "manifest.json"))
        self.problems: List[Dict[str, Any]] = self.manifest.get("problems", [])
        self.domain: str = self.manifest.get("domain", "")
        self.words: int = int(self.manifest.get("words", 0))
        self._arrays: Dict[str, np.ndarray] = {}

    def __getattr__(self, name: str) -> np.ndarray:
        if name in DATASET_ARRAYS:
            if name not in self._arrays:
                a = load_array(os.path.join(self.dir, name + ".npy"), self.mmap)
                if name == "states" and (a.ndim != 2 or a.shape[1] != self.words):
                    raise NextstateError(f"{self.dir}/states.npy: expected [N, {self.words}] as manifest.json says")
                self._arrays[name] = a
            return self._arrays[name]
        raise AttributeError(name)

    def __len__(self) -> int:
        return int(self.manifest.get("counts", {}).get("states", 0))

    def problem_states(self, i: int) -> np.ndarray:
        """The states of problem i (a view of ``states``)."""
        p = self.problems[i]
        return self.states[p["state_offset"]:p["state_offset"] + p["states"]]

    def arrays(self) -> Dict[str, np.ndarray]:
        """Every array by name."""
        return {n: getattr(self, n) for n in DATASET_ARRAYS}


class Split:
    """A split directory: ``meta`` (split.json) and the ``train``, ``dev``,
    ``test`` (int64 [n, 2]: dataset index, transition index) and ``pools``
    arrays."""

    def __init__(self, directory: str | os.PathLike, mmap: bool = True) -> None:
        self.dir = os.fspath(directory)
        self.meta = _manifest(os.path.join(self.dir, "split.json"))
        self.protocol: str = self.meta.get("protocol", "")
        self.datasets: List[Dict[str, Any]] = self.meta.get("datasets", [])
        for n in SPLIT_ARRAYS:
            setattr(self, n, load_array(os.path.join(self.dir, n + ".npy"), mmap))

    def counts(self) -> Dict[str, int]:
        return {n: int(getattr(self, n).shape[0]) for n in ("train", "dev", "test")}


def load_dataset(directory: str | os.PathLike, mmap: bool = True) -> Dataset:
    """``Dataset(directory)``."""
    return Dataset(directory, mmap)


def load_split(directory: str | os.PathLike, mmap: bool = True) -> Split:
    """``Split(directory)``."""
    return Split(directory, mmap)


__all__ = ["Dataset", "Split", "load_array", "load_dataset", "load_split", "Optional"]
