"""Tasks: a PDDL domain and problem, parsed and grounded by the library."""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Tuple

from . import _core

#: The searches of ``nextstate solve`` and their heuristics.
SEARCHES = ("bfs", "astar", "gbfs", "lazy", "lama")
HEURISTICS = ("blind", "hmax", "hadd", "ff", "lmcut")


class Task(_core.Task):
    """A grounded STRIPS task (``Task(domain_path, problem_path)``).

    Grounding keeps only what relaxed reachability reaches; fluent atoms and
    operators have canonical ids (sorted by name).  Raises
    :class:`nextstate.NextstateError` (``file:line:col: message``) for a
    missing file or malformed PDDL."""

    def __init__(self, domain: str, problem: str, domain_text: Optional[str] = None,
                 problem_text: Optional[str] = None) -> None:
        super().__init__(os.fspath(domain), os.fspath(problem), domain_text, problem_text)
        i = self.info()
        self.domain_name: str = i["domain_name"]
        self.problem_name: str = i["problem_name"]
        self.domain_path: str = os.fspath(domain)
        self.problem_path: str = os.fspath(problem)
        self.natoms: int = i["natoms"]
        self.nops: int = i["nops"]
        self.nwords: int = i["nwords"]
        self.unit_cost: bool = i["unit_cost"]
        self._op_names: Optional[List[str]] = None

    @classmethod
    def from_text(cls, domain_text: str, problem_text: str, domain_name: str = "<domain>",
                  problem_name: str = "<problem>") -> "Task":
        """A task from PDDL text held in memory (names are used in error messages)."""
        return cls(domain_name, problem_name, domain_text, problem_text)

    def __repr__(self) -> str:
        return f"<nextstate.Task {self.domain_name}/{self.problem_name}: {self.natoms} atoms, {self.nops} operators>"

    def op_name(self, op: int) -> str:
        """The printed name ``(schema a1 … ak)`` of operator ``op``."""
        if self._op_names is None:
            self._op_names = self.op_names()
        return self._op_names[op]

    def op_id(self, name: str) -> int:
        """The id of the operator printed as ``name``; KeyError when absent."""
        if self._op_names is None:
            self._op_names = self.op_names()
        if not hasattr(self, "_op_index"):
            self._op_index = {n: i for i, n in enumerate(self._op_names)}
        return self._op_index[name.strip().lower()]

    def validate(self, plan: Sequence[int] | str | os.PathLike, path: Optional[str] = None) -> Dict:
        """Validates a plan: a list of operator ids, IPC plan text, or the path
        of a plan file.  Returns ``{valid, failed_step, length, cost, reason}``;
        raises NextstateError when the plan does not parse (unknown action or
        object, wrong arity) at ``file:line:col``."""
        if isinstance(plan, os.PathLike) or (isinstance(plan, str) and "(" not in plan and plan.strip()):
            p = os.fspath(plan)
            try:
                with open(p) as f:
                    text = f.read()
            except OSError as e:
                raise NextstateError(f"{p}: cannot read the plan: {e.strerror}") from None
            return self.validate_text(text, p)
        if isinstance(plan, str):
            return self.validate_text(plan, path or "<plan>")
        return self.validate_text(self.plan_text(list(plan)), path or "<plan>")

    def solve(self, search: str = "astar", heuristic: Optional[str] = None, time_limit: float = 0.0,
              memory_limit: int = 0, prune_irrelevant: bool = True, preferred: bool = True) -> Dict:
        """Classical search, as ``nextstate solve``: ``search`` is bfs, astar,
        gbfs, lazy (greedy best-first search with deferred evaluation, Fast
        Downward's lazy_greedy) or lama (LAMA-first: lazy GBFS on h^FF and the
        landmark count, four open lists); ``heuristic`` blind, hmax, hadd, ff
        or lmcut (default lmcut for A*, ff for gbfs and lazy; bfs and lama
        ignore it).  ``preferred``: the heuristic's preferred operators in a
        second open list (gbfs with ff, lazy).  Returns ``{status, solved,
        plan (operator ids), cost, expanded, generated, evaluated, initial_h,
        seconds, search, heuristic}`` (heuristic "ff+lmcount" for lama);
        ``plan_text`` renders the plan."""
        r = super().solve(search, heuristic, float(time_limit), int(memory_limit), prune_irrelevant, preferred)
        r["plan_names"] = [self.op_name(op) for op in r["plan"]]
        return r

    def plan_states(self, plan: Sequence[int]) -> List[bytes]:
        """The states along a plan (operator ids), the initial state first."""
        s = self.initial_state()
        out = [s]
        for op in plan:
            s = self.apply(s, op)
            out.append(s)
        return out


NextstateError = _core.NextstateError


def load(domain: str | os.PathLike, problem: str | os.PathLike) -> Task:
    """Parses and grounds a PDDL domain and problem."""
    return Task(os.fspath(domain), os.fspath(problem))


def generate(domain: str, options: Optional[Dict[str, int]] = None, seed: int = 1, name: str = "problem") -> str:
    """A random solvable problem of a shipped domain (as ``nextstate gen``),
    as PDDL text; the same arguments give the same text."""
    return _core.generate(domain, options or {}, seed, name)


def gen_domains() -> List[str]:
    """Names of the domains ``generate`` knows."""
    return _core.gen_domains()


def gen_options(domain: str) -> List[Dict]:
    """The size options of a generator domain: ``[{name, default, min, help}]``."""
    return _core.gen_options(domain)


__all__ = ["Task", "load", "generate", "gen_domains", "gen_options", "SEARCHES", "HEURISTICS", "Tuple"]
