"""nextstate: grounded PDDL tasks, classical search, plan validation, WL and
bag-of-literals features as NumPy arrays, the library's datasets and
splits, and its learned models (a WL heuristic, next-state predictors, the
world model), from Python.

    >>> import nextstate as ns
    >>> task = ns.load("domain.pddl", "p01.pddl")
    >>> s = task.initial_state()
    >>> [task.op_name(op) for op, _ in task.successors(s)]
    >>> result = task.solve(search="astar", heuristic="lmcut")

States are ``bytes`` (the task's packed bitset: ``task.nwords`` little-endian
64-bit words); they are hashable, and ``np.frombuffer(s, np.uint64)`` gives
the words.  Library errors raise :class:`NextstateError`, whose ``str`` is
the library's ``file:line:col: message``.
"""
from ._core import NextstateError
from .task import SEARCHES, HEURISTICS, Task, load, generate, gen_domains, gen_options
from .features import WLFeatureGenerator, bag_of_literals, states_array
from .models import HEURISTIC_ALGOS, MODELS, PLAN_ALGOS, Model, learn, load_model, train_world, evaluate_world
from . import data

__all__ = [
    "NextstateError", "Task", "load", "generate", "gen_domains", "gen_options", "SEARCHES", "HEURISTICS",
    "WLFeatureGenerator", "bag_of_literals", "states_array", "data",
    "Model", "MODELS", "PLAN_ALGOS", "HEURISTIC_ALGOS", "learn", "load_model", "train_world", "evaluate_world",
]
__version__ = "0.1.0"
