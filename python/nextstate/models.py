"""Learned models: the learned WL heuristic and the first paper's next-state
models (``nextstate learn`` / ``plan``), and the EmbedPlan world model
(``nextstate train`` / ``eval``).

    model = ns.learn("domain.pddl", "train/", model="hwl")   # solves the training problems
    r = model.plan(ns.load("domain.pddl", "big.pddl"), time_limit=60)
    task.validate(r["plan"])["valid"]
    model.heuristic(task, task.initial_state())             # h(s) = w·φ(s) + b

Every call is the library's own (the CLI's code path); errors raise
:class:`nextstate.NextstateError` with ``file:line:col: message``."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Sequence, Union

import numpy as np

from . import _core
from .features import States, states_array
from .task import Task

PathLike = Union[str, "os.PathLike[str]"]

#: ``learn``'s model kinds: the learned heuristic, and the next-state predictors.
MODELS = ("hwl", "xgb", "lstm")
#: ``Model.plan``'s algorithms for next-state predictors (planner.h).
PLAN_ALGOS = ("beam", "restart", "search", "guided")
#: ... and for a learned heuristic ("lama", the default: h beside h^FF and h^LM in LAMA-first's search).
HEURISTIC_ALGOS = ("lama", "lama-h", "guided", "search")


def _other_domain(e: "_core.NextstateError", model: "Model", task: Task) -> "_core.NextstateError":
    """e with the two domains named when the task is not of the model's domain."""
    dom = model.info()["domain_name"]
    if not dom or dom == task.domain_name:
        return e
    out = _core.NextstateError(f"{e} (the model was learned on domain '{dom}', the task is of domain "
                               f"'{task.domain_name}')")
    for k in ("status", "code", "file", "line", "col", "msg"):
        if hasattr(e, k):
            setattr(out, k, getattr(e, k))
    return out


class Model(_core.Model):
    """A learned model: ``kind`` is "hwl" (a heuristic h(s) = w·φ(s) + b on
    WL features), "xgb" or "lstm" (next-state predictors).  Made by
    :func:`learn` or :func:`load_model`; ``info()`` tells its dimension and
    training record; ``train_info`` is set by :func:`learn` (None when
    loaded)."""

    train_info: Optional[Dict[str, Any]] = None

    @property
    def kind(self) -> str:
        return self.info()["model"]

    def __repr__(self) -> str:
        i = self.info()
        return f"<nextstate.Model {i['model']} ({i['encoder']}, D = {i['dim']}) of domain {i['domain_name'] or '?'}>"

    def save(self, path: PathLike) -> None:  # type: ignore[override]
        """Writes the model file (checksummed, atomically); ``load_model`` reads it."""
        super().save(os.fspath(path))

    def plan(self, task: Task, algo: Optional[str] = None, width: int = 3, max_steps: int = 0,
             time_limit: float = 0.0, memory_limit: int = 0, raw_plan: bool = False,
             fallback: Optional[float] = None) -> Dict[str, Any]:
        """Plans for ``task`` as ``nextstate plan --model`` does.  A learned
        heuristic runs, by default, the search ``learn`` chose for it
        (``info()["algo"]``): in LAMA-first's search beside h^FF and h^LM
        (``"lama"``), in h^FF's place (``"lama-h"``), GBFS on h with h^FF's
        helpful actions preferred (``"guided"``) or on h alone (``"search"``); a
        next-state predictor takes beam (default), restart, search or guided
        (planner.h).  ``time_limit`` in CPU seconds (0: none); with one, a
        learned heuristic's search that has found no plan in the first
        ``1 - fallback`` of it leaves the rest to LAMA-first without h
        (None: ``nextstate plan``'s share, 0.2; 0: no fallback; ``classical``
        in the result says whose plan it is).  The plan is
        shortened (greedy action elimination, then plan neighbourhood graph
        search for a quarter of the search's time; ``eliminated`` counts the
        steps dropped) unless ``raw_plan``.  Returns ``{status, solved, plan (operator ids),
        plan_length (-1 unsolved), plan_names, algo, width, expanded,
        predictions, eliminated, classical, work, seconds, model_seconds}`` (``work``: a learned
        heuristic's searches' work, counted steps that are the same on every machine); the plan is checked
        against γ."""
        try:
            r = self._plan(task, algo, int(width), int(max_steps), float(time_limit), int(memory_limit),
                           bool(raw_plan), None if fallback is None else float(fallback))
        except _core.NextstateError as e:
            raise _other_domain(e, self, task) from None
        r["plan_names"] = [task.op_name(op) for op in r["plan"]]
        return r

    def h_batch(self, task: Task, states: States) -> np.ndarray:
        """h(s) = w·φ(s) + b for each state (learned heuristics only): a
        float64 array of n values, the order search follows, negative values included."""
        a = states_array(task, states)
        out = np.zeros(a.shape[0], dtype=np.float64)
        try:
            self._h_into(task, a, out)
        except _core.NextstateError as e:
            raise _other_domain(e, self, task) from None
        return out

    def heuristic(self, task: Task, state: bytes) -> float:
        """h(s) of one state (learned heuristics only); see ``h_batch``."""
        if not isinstance(state, (bytes, bytearray, memoryview, np.ndarray)):
            raise TypeError(f"a state must be bytes or a uint64 array, not {type(state).__name__}")
        a = states_array(task, state)
        if a.shape[0] != 1:
            raise ValueError(f"heuristic takes one state, got {a.shape[0]} (use h_batch)")
        return float(self.h_batch(task, a)[0])

    __call__ = heuristic


def learn(domain: PathLike, train_dir: PathLike, model: str = "hwl", plans: Optional[PathLike] = None,
      val_dir: Optional[PathLike] = None, val_plans: Optional[PathLike] = None, *, encoder: str = "wl",
      mode: Optional[str] = None, iterations: Optional[int] = None, statics: bool = True, lambda_: float = 1.0,
      lr: float = 1e-2, epochs: int = 500, hidden: int = 256, layers: int = 2, batch: int = 32, seed: int = 13,
      rounds: int = 1000, depth: int = 8, threads: int = 1, max_objects: int = 0,
      solve_time_limit: float = 60.0, solve_memory_limit: float = 4096.0, optimal_only: bool = False,
      rank: int = 4, choose: int = 8, bootstrap: bool = False, jobs: Optional[int] = None,
      solve_work: Optional[int] = None, return_info: bool = False) -> Any:
    """Trains a model on the problems of ``train_dir`` (its *.pddl files
    other than domain.pddl), as ``nextstate learn``: each problem's plan is
    ``plans/<stem>.plan``, or — without ``plans`` — found by A*-LM-cut
    within ``solve_work`` steps of heuristic work (None: ``learn``'s default,
    10**9; a budget, so the plans and the model are the same on every
    machine; ``solve_time_limit`` s is
    a safety cap) and ``solve_memory_limit`` MB, else by GBFS-h^FF,
    shortened (``optimal_only``: an error instead); a problem
    neither solves is skipped, unless ``bootstrap`` (hwl: planned with the
    learned h in the same limits, the model learned again with those plans
    and kept when its held-out choice does better); ``jobs`` problems are
    solved (and held-out problems planned) at once, each in a child process
    with its own limits (None: one per CPU the memory allows, as ``learn``).  ``model`` is "hwl" (ridge regression of h* on WL
    features, penalty ``lambda_``, with a ranking term over ``rank`` sibling
    successors per plan step; the search it plans with, and 2 or 4 WL
    ``iterations`` unless given, are chosen on two held-out folds of
    training problems: the ``choose`` largest and as many spread over the
    larger half of the rest), "xgb" or "lstm" (next-state
    predictors on ``encoder`` wl or fsf features, ``mode`` state or
    delta).  Returns a :class:`Model` whose ``train_info`` is what
    ``learn --json`` prints (plus the unsolved, satisficing and time-capped
    counts)."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, not {model!r}")
    if solve_work is not None and solve_work < 0:
        raise ValueError("solve_work must be >= 0")
    m, info = _core.learn(
        os.fspath(domain), os.fspath(train_dir), model, None if plans is None else os.fspath(plans),
        None if val_dir is None else os.fspath(val_dir), None if val_plans is None else os.fspath(val_plans),
        encoder, mode, -1 if iterations is None else int(iterations), bool(statics), float(lambda_), float(lr),
        int(epochs), int(hidden),
        int(layers), int(batch), int(seed), int(rounds), int(depth), int(threads), int(max_objects),
        float(solve_time_limit), float(solve_memory_limit), bool(optimal_only), Model, int(rank), int(choose),
        bool(bootstrap), -1 if jobs is None else int(jobs), -1 if solve_work is None else int(solve_work))
    m.train_info = info
    return m


def load_model(path: PathLike) -> Model:
    """Reads a model file ``learn`` (or ``nextstate learn``) wrote: a learned
    heuristic or a next-state predictor.  A missing, truncated or corrupt
    file raises NextstateError naming it."""
    return _core.load_model(os.fspath(path), Model)


def train_world(split_dir: PathLike, out: PathLike, **opts: Any) -> Dict[str, Any]:
    """Trains the EmbedPlan world model on a split (``nextstate split``'s
    folder) and writes its checkpoint to ``out``, as ``nextstate train``.
    Options are train's, spelled with underscores: model (resmlp, film),
    layers, hidden, out_dim (``--out``), t_hidden, lr, weight_decay, tau,
    action_weight, time_limit, warmup_start, batch, epochs, steps, min_steps,
    warmup, seed, action_k, action_loss (list, grid, none), eval_every,
    patience, dev_pool, state_features, action_features, standardize, log.
    Returns the checkpoint's "train" object (what ``train --json``
    prints)."""
    for k in ("state_features", "action_features", "log"):
        if opts.get(k) is not None:
            opts[k] = os.fspath(opts[k])
    return json.loads(_core.train_world(os.fspath(split_dir), os.fspath(out), **opts))


def evaluate_world(model: PathLike, split_dir: PathLike, on: str = "test", seed: Optional[int] = None,
               latency: int = 0, acc: bool = True, bf16: bool = False,
               pool_sweep: Optional[Sequence[int]] = None, rollout: bool = False, rollout_pool: int = 0,
               state_features: Optional[PathLike] = None,
               action_features: Optional[PathLike] = None) -> Dict[str, Any]:
    """Evaluates a world-model checkpoint on a split's test list (or
    ``on="dev"``), as ``nextstate eval --json``: Hit@k, Acc@k, MRR, their
    ceilings, per-dataset shares, a pool-size sweep (``pool_sweep``, 0 for
    the full pool), plan-level metrics and a closed-loop ``rollout``;
    ``latency`` queries to time (0: none).  Returns the report as a
    dict."""
    kw: Dict[str, Any] = {"on": on, "latency": int(latency), "acc": bool(acc), "bf16": bool(bf16),
                          "rollout": bool(rollout), "rollout_pool": int(rollout_pool)}
    if seed is not None:
        kw["seed"] = int(seed)
    if pool_sweep is not None:
        kw["pool_sweep"] = [int(x) for x in pool_sweep]
    if state_features is not None:
        kw["state_features"] = os.fspath(state_features)
    if action_features is not None:
        kw["action_features"] = os.fspath(action_features)
    return json.loads(_core.evaluate_world(os.fspath(model), os.fspath(split_dir), **kw))


__all__ = ["Model", "MODELS", "PLAN_ALGOS", "learn", "load_model", "train_world", "evaluate_world"]
