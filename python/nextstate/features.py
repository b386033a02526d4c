"""State features as NumPy arrays: WL (shaped like WLPlan's feature
generator) and the binary bag of literals."""
from __future__ import annotations

import os
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from .task import Task

States = Union[bytes, Sequence[bytes], np.ndarray]


def states_array(task: Task, states: States) -> np.ndarray:
    """States as a C-contiguous ``(n, task.nwords)`` uint64 array.  Accepts
    one state (bytes), a sequence of states, or such an array; raises
    ValueError for a wrong shape or dtype."""
    if isinstance(states, (bytes, bytearray, memoryview)):
        states = [bytes(states)]
    if isinstance(states, np.ndarray):
        a = states
        if a.dtype != np.uint64:
            raise ValueError(f"states must be uint64, got {a.dtype}")
        if a.ndim == 1:
            a = a.reshape(1, -1)
        if a.ndim != 2 or a.shape[1] != task.nwords:
            raise ValueError(f"states must have shape (n, {task.nwords}), got {states.shape}")
        return np.ascontiguousarray(a)
    states = list(states)
    for s in states:
        if not isinstance(s, (bytes, bytearray)) or len(s) != 8 * task.nwords:
            raise ValueError(f"a state of this task is {8 * task.nwords} bytes")
    if not states:
        return np.zeros((0, task.nwords), dtype=np.uint64)
    return np.frombuffer(b"".join(states), dtype=np.uint64).reshape(len(states), task.nwords)


def bag_of_literals(task: Task, states: States) -> np.ndarray:
    """Binary bag of literals: an ``(n, task.natoms)`` uint8 matrix, column i
    for fluent atom i (``task.atom_names()[i]``)."""
    a = states_array(task, states)
    out = np.zeros((a.shape[0], task.natoms), dtype=np.uint8)
    task._literals_into(a, out)
    return out


class WLFeatureGenerator:
    """Weisfeiler–Leman features of the Instance Learning Graph, computed
    exactly as WLPlan does (``wlplan.feature_generator`` with
    ``feature_algorithm="wl"``, ``graph_representation="ilg"``,
    ``pruning="none"``).

    ``fit`` collects the colour vocabulary from training states (WLPlan's
    ``collect``), ``transform`` maps states to a count matrix (WLPlan's
    ``embed``); ``save``/``load`` read and write WLPlan's model JSON.

        fg = WLFeatureGenerator(iterations=2)
        fg.fit([(task, task.plan_states(plan)) for task, plan in training])
        X = fg.transform(task, states)          # (n, fg.n_features) float64

    ``statics=True`` counts static atoms as state atoms (as the first paper's
    data does)."""

    def __init__(self, iterations: int = 2, multiset_hash: bool = True, statics: bool = True) -> None:
        if iterations < 0:
            raise ValueError("iterations must be >= 0")
        self.iterations = int(iterations)
        self.multiset_hash = bool(multiset_hash)
        self.statics = bool(statics)
        self._v = _core.WLVocab()
        self._fitted = False

    def fit(self, data: Iterable[Tuple[Task, States]]) -> "WLFeatureGenerator":
        """Collects colours from ``[(task, states), …]`` (tasks of one domain;
        states in the order given).  Returns self."""
        groups = [(t, states_array(t, s)) for t, s in data]
        self._v._fit(groups, self.iterations, self.multiset_hash, self.statics)
        self._fitted = True
        return self

    collect = fit

    def transform(self, task: Task, states: States, iterations: Optional[int] = None) -> np.ndarray:
        """WL feature counts: an ``(n, n_features)`` float64 matrix (unseen
        colours dropped).  ``iterations`` may be at most the fitted one."""
        a = states_array(task, states)
        out = np.zeros((a.shape[0], self.n_features), dtype=np.float64)
        self._v._transform_into(task, a, out, -1 if iterations is None else int(iterations))
        return out

    def fit_transform(self, task: Task, states: States) -> np.ndarray:
        """``fit([(task, states)])`` then ``transform(task, states)``."""
        return self.fit([(task, states)]).transform(task, states)

    def embed(self, data: Iterable[Tuple[Task, States]]) -> np.ndarray:
        """WLPlan's ``embed`` over a dataset: the rows of every group, stacked."""
        mats = [self.transform(t, s) for t, s in data]
        return np.vstack(mats) if mats else np.zeros((0, self.n_features))

    @property
    def n_features(self) -> int:
        """Feature dimension (number of colour ids)."""
        return self._v._dim()

    def get_n_features(self) -> int:
        """WLPlan's spelling of ``n_features``."""
        return self.n_features

    def save(self, path: Union[str, os.PathLike], key_format: str = "triples") -> None:
        """Writes WLPlan model JSON; ``key_format="triples"`` is what the PyPI
        wheel reads, ``"flat"`` the first paper's spelling."""
        self._v._save(os.fspath(path), key_format)

    @classmethod
    def load(cls, path: Union[str, os.PathLike], key_format: str = "auto", statics: bool = True) -> "WLFeatureGenerator":
        """Reads a WLPlan model JSON (either key spelling)."""
        v = _core.WLVocab()
        v._load(os.fspath(path), key_format, statics)
        info = v._info()
        fg = cls(info["iterations"], info["multiset"], statics)
        fg._v = v
        fg._fitted = True
        return fg


__all__ = ["WLFeatureGenerator", "bag_of_literals", "states_array", "List"]
