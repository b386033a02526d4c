"""The nextstate engine for Unified Planning (see the package docstring)."""
from __future__ import annotations

import os
import tempfile
from typing import IO, Callable, Optional

import unified_planning as up
from unified_planning.engines import Credits, Engine, PlanGenerationResult, PlanGenerationResultStatus
from unified_planning.engines.mixins import OneshotPlannerMixin
from unified_planning.io import PDDLWriter
from unified_planning.model import ProblemKind
from unified_planning.plans import ActionInstance, SequentialPlan

import nextstate

CREDITS = Credits(
    "nextstate",
    "the nextstate authors",
    "",
    "",
    "C11 library",
    "Grounded STRIPS search (BFS, A*, GBFS with blind, h^max, h^add, h^FF, LM-cut) in a C library.",
    "Classical search of the nextstate library, in-process.",
)

_STATUS = {
    "unsolvable": PlanGenerationResultStatus.UNSOLVABLE_PROVEN,
    "incomplete": PlanGenerationResultStatus.UNSOLVABLE_INCOMPLETELY,
    "out of time": PlanGenerationResultStatus.TIMEOUT,
    "out of memory": PlanGenerationResultStatus.MEMOUT,
}


class NextstateEngine(Engine, OneshotPlannerMixin):
    """OneshotPlanner "nextstate".  Parameters: ``search`` (bfs, astar, gbfs;
    default astar), ``heuristic`` (blind, hmax, hadd, ff, lmcut; default lmcut
    for A*, ff for GBFS), ``memory_limit`` (bytes, 0 = none).  A* with an
    admissible heuristic (blind, hmax, lmcut) and BFS on unit costs return
    SOLVED_OPTIMALLY, anything else SOLVED_SATISFICING."""

    def __init__(self, search: str = "astar", heuristic: Optional[str] = None, memory_limit: int = 0) -> None:
        Engine.__init__(self)
        OneshotPlannerMixin.__init__(self)
        if search not in nextstate.SEARCHES:
            raise up.exceptions.UPUsageError(f"nextstate: unknown search {search!r} (bfs, astar or gbfs)")
        if heuristic is not None and heuristic not in nextstate.HEURISTICS:
            raise up.exceptions.UPUsageError(f"nextstate: unknown heuristic {heuristic!r}")
        self.search = search
        self.heuristic = heuristic
        self.memory_limit = int(memory_limit)

    @property
    def name(self) -> str:
        return "nextstate"

    @staticmethod
    def supported_kind() -> ProblemKind:
        k = ProblemKind(version=2)
        k.set_problem_class("ACTION_BASED")
        k.set_typing("FLAT_TYPING")
        k.set_typing("HIERARCHICAL_TYPING")
        k.set_conditions_kind("NEGATIVE_CONDITIONS")
        k.set_conditions_kind("DISJUNCTIVE_CONDITIONS")
        k.set_conditions_kind("EQUALITIES")
        k.set_quality_metrics("ACTIONS_COST")
        k.set_actions_cost_kind("INT_NUMBERS_IN_ACTIONS_COST")
        k.set_quality_metrics("PLAN_LENGTH")
        return k

    @staticmethod
    def supports(problem_kind: ProblemKind) -> bool:
        return problem_kind <= NextstateEngine.supported_kind()

    @staticmethod
    def satisfies(optimality_guarantee: up.engines.OptimalityGuarantee) -> bool:
        # Only satisficing is promised for every configuration (GBFS is not optimal).
        return optimality_guarantee == up.engines.OptimalityGuarantee.SATISFICING

    @staticmethod
    def get_credits(**kwargs) -> Optional[Credits]:
        return CREDITS

    def _optimal(self, task: nextstate.Task) -> bool:
        h = self.heuristic or ("lmcut" if self.search == "astar" else "ff")
        if self.search == "bfs":
            return task.unit_cost
        return self.search == "astar" and h in ("blind", "hmax", "lmcut")

    def _solve(self, problem: "up.model.AbstractProblem",
               heuristic: Optional[Callable[["up.model.state.State"], Optional[float]]] = None,
               timeout: Optional[float] = None, output_stream: Optional[IO[str]] = None) -> PlanGenerationResult:
        assert isinstance(problem, up.model.Problem)
        if heuristic is not None:
            self._warn("nextstate: a custom UP heuristic is not used; the library's own heuristics are")
        w = PDDLWriter(problem)
        with tempfile.TemporaryDirectory(prefix="up_nextstate.") as d:
            dp, pp = os.path.join(d, "domain.pddl"), os.path.join(d, "problem.pddl")
            w.write_domain(dp)
            w.write_problem(pp)
            task = nextstate.load(dp, pp)
            r = task.solve(self.search, self.heuristic, time_limit=timeout or 0.0, memory_limit=self.memory_limit)
        names = {k.lower(): v for k, v in w.nto_renamings.items()}
        metrics = {k: str(r[k]) for k in ("expanded", "generated", "evaluated", "seconds", "search", "heuristic")}
        if output_stream is not None:
            output_stream.write(f"nextstate: {r['status']}, {r['expanded']} expanded, {r['seconds']:.3f} s\n")
        if not r["solved"]:
            return PlanGenerationResult(_STATUS.get(r["status"], PlanGenerationResultStatus.INTERNAL_ERROR), None,
                                        self.name, metrics)
        steps = []
        for text in r["plan_names"]:
            toks = text.strip("()").split()
            action = names[toks[0]]
            objs = [problem.environment.expression_manager.ObjectExp(names[o]) for o in toks[1:]]
            steps.append(ActionInstance(action, tuple(objs)))
        status = (PlanGenerationResultStatus.SOLVED_OPTIMALLY if self._optimal(task)
                  else PlanGenerationResultStatus.SOLVED_SATISFICING)
        return PlanGenerationResult(status, SequentialPlan(steps, problem.environment), self.name, metrics)

    def _warn(self, msg: str) -> None:
        import warnings
        warnings.warn(msg)


def register(env: Optional["up.environment.Environment"] = None) -> None:
    """Adds the engine "nextstate" to a UP environment's factory (the global one by default)."""
    env = env or up.environment.get_environment()
    if "nextstate" not in env.factory.engines:
        env.factory.add_engine("nextstate", "up_nextstate.engine", "NextstateEngine")
