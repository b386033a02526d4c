"""The nextstate engine for Unified Planning (see the package docstring)."""
from __future__ import annotations

import os
import re
from typing import IO, Any, Callable, Dict, Optional, Tuple, Union

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
    "Grounded STRIPS search (BFS, A*, GBFS, lazy GBFS with blind, h^max, h^add, h^FF, LM-cut; LAMA-first) and "
    "learned planning models (a learned WL heuristic, next-state predictors) in a C library.",
    "Classical search or a learned model of the nextstate library, in-process.",
)

_STATUS = {
    "unsolvable": PlanGenerationResultStatus.UNSOLVABLE_PROVEN,
    "incomplete": PlanGenerationResultStatus.UNSOLVABLE_INCOMPLETELY,
    "out of time": PlanGenerationResultStatus.TIMEOUT,
    "out of memory": PlanGenerationResultStatus.MEMOUT,
}


class NextstateEngine(Engine, OneshotPlannerMixin):
    """OneshotPlanner "nextstate".  Classical search: ``search`` (bfs, astar,
    gbfs, lazy, lama; default astar), ``heuristic`` (blind, hmax, hadd, ff,
    lmcut; default lmcut for A*, ff for gbfs and lazy; bfs and lama take
    none), ``memory_limit`` (bytes, 0 = none).  A* with an admissible
    heuristic (blind, hmax, lmcut) and BFS on unit costs return
    SOLVED_OPTIMALLY, anything else SOLVED_SATISFICING.

    A learned model: ``model`` (the path of a model file ``nextstate learn``
    or ``Model.save`` wrote, or a loaded :class:`nextstate.Model`) plans with
    ``Model.plan`` — for a learned heuristic the search ``learn`` chose for
    it, with LAMA-first as its fallback in the last fifth of a timeout — and
    ``algo`` picks another of its algorithms (``Model.plan``'s); the result
    is SOLVED_SATISFICING.  A model that does
    not fit the problem (another domain's: a predicate it has not seen)
    raises UPUsageError naming the model, its domain and the predicate."""

    def __init__(self, search: Optional[str] = None, heuristic: Optional[str] = None, memory_limit: int = 0,
                 model: Union[None, str, "os.PathLike[str]", nextstate.Model] = None,
                 algo: Optional[str] = None) -> None:
        Engine.__init__(self)
        OneshotPlannerMixin.__init__(self)
        if model is not None and (search is not None or heuristic is not None):
            raise up.exceptions.UPUsageError("nextstate: 'model' plans with the learned model; 'search' and "
                                             "'heuristic' are for classical search (give one or the other)")
        if model is None and algo is not None:
            raise up.exceptions.UPUsageError("nextstate: 'algo' is a learned model's algorithm; give 'model' too")
        search = search or "astar"
        if search not in nextstate.SEARCHES:
            raise up.exceptions.UPUsageError(f"nextstate: unknown search {search!r} ({', '.join(nextstate.SEARCHES)})")
        if heuristic is not None and heuristic not in nextstate.HEURISTICS:
            raise up.exceptions.UPUsageError(f"nextstate: unknown heuristic {heuristic!r}")
        if heuristic is not None and search in ("bfs", "lama"):
            raise up.exceptions.UPUsageError(f"nextstate: search {search!r} takes no heuristic"
                                             + (" (LAMA-first uses h^FF and the landmark count)"
                                                if search == "lama" else ""))
        self.search = search
        self.heuristic = heuristic
        self.memory_limit = int(memory_limit)
        self.model: Optional[nextstate.Model] = None
        self.model_path: Optional[str] = None  # None: a Model object was given
        self.algo = algo
        if model is not None:
            if isinstance(model, nextstate.Model):
                self.model = model
            else:
                self.model_path = os.fspath(model)
                try:
                    self.model = nextstate.load_model(self.model_path)
                except nextstate.NextstateError as e:
                    raise up.exceptions.UPUsageError(f"nextstate: cannot load the model: {e}") from e
            algos = nextstate.HEURISTIC_ALGOS if self.model.kind == "hwl" else nextstate.PLAN_ALGOS
            if algo is not None and algo not in algos:
                raise up.exceptions.UPUsageError(f"nextstate: a {self.model.kind} model plans with "
                                                 f"{', '.join(algos)}, not {algo!r}")

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
        if self.model is not None:
            return False
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
        domain_text, problem_text, actions = _write_pddl(w, problem)
        task = nextstate.Task.from_text(domain_text, problem_text, f"{problem.name} (UP, domain)",
                                        f"{problem.name} (UP, problem)")
        metrics: Dict[str, str]
        if self.model is not None:
            try:
                r = self.model.plan(task, self.algo, time_limit=timeout or 0.0, memory_limit=self.memory_limit)
            except nextstate.NextstateError as e:
                raise up.exceptions.UPUsageError(self._misfit(e, w, problem)) from e
            metrics = {k: str(r[k]) for k in ("expanded", "predictions", "seconds", "model_seconds", "algo")}
            metrics["model"] = self.model.kind
        else:
            r = task.solve(self.search, self.heuristic, time_limit=timeout or 0.0, memory_limit=self.memory_limit)
            metrics = {k: str(r[k]) for k in ("expanded", "generated", "evaluated", "seconds", "search", "heuristic")}
        if output_stream is not None:
            output_stream.write(f"nextstate: {r['status']}, {r['expanded']} expanded, {r['seconds']:.3f} s\n")
        if not r["solved"]:
            return PlanGenerationResult(_STATUS.get(r["status"], PlanGenerationResultStatus.INTERNAL_ERROR), None,
                                        self.name, metrics)
        objects = {k.lower(): v for k, v in w.nto_renamings.items()}
        steps = []
        for text in r["plan_names"]:
            toks = text.strip("()").split()
            objs = [problem.environment.expression_manager.ObjectExp(objects[o]) for o in toks[1:]]
            steps.append(ActionInstance(actions[toks[0]], tuple(objs)))
        status = (PlanGenerationResultStatus.SOLVED_OPTIMALLY if self._optimal(task)
                  else PlanGenerationResultStatus.SOLVED_SATISFICING)
        return PlanGenerationResult(status, SequentialPlan(steps, problem.environment), self.name, metrics)

    def _misfit(self, e: "nextstate.NextstateError", w: PDDLWriter, problem: "up.model.Problem") -> str:
        """The message of a model that cannot plan for the problem."""
        assert self.model is not None
        i = self.model.info()
        src = f" {self.model_path}" if self.model_path else ""
        msg = (f"nextstate: the {i['model']} model{src} (learned on domain '{i['domain_name'] or '?'}') cannot plan "
               f"for the UP problem '{problem.name}': {getattr(e, 'msg', '') or e}")
        renamed = [f"{f.name} -> {w.otn_renamings[f]}" for f in problem.fluents
                   if f in w.otn_renamings and w.otn_renamings[f] != f.name]
        if renamed:
            msg += (f"; UP's PDDLWriter renamed fluents ({', '.join(renamed)}) and the model knows predicates by "
                    f"their names in the domain it was learned on")
        return msg

    def _warn(self, msg: str) -> None:
        import warnings
        warnings.warn(msg)


_PDDL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


def _write_pddl(w: PDDLWriter, problem: "up.model.Problem") -> Tuple[str, str, Dict[str, Any]]:
    """UP's PDDL of the problem, and its action names (lower case) -> UP actions.

    UP has one namespace for all names, PDDL one per kind: the writer renames
    an action that shares its name with a fluent or an object (floortile's
    up/down/left/right) though PDDL would not need it.  Such actions get
    their own names back, so the task's schemata are the original domain's
    (a next-state model knows actions by those names)."""
    domain_text, problem_text = w.get_domain(), w.get_problem()
    names: Dict[str, Any] = {}
    taken = {w.otn_renamings[a].lower() for a in problem.actions}
    for a in problem.actions:
        pddl = w.otn_renamings[a]
        if (pddl != a.name and _PDDL_NAME.match(a.name) and a.name.lower() not in taken
                and a.name.lower() not in w.pddl_keywords):
            domain_text, n = re.subn(r"\(:action " + re.escape(pddl) + r"(?=\s)", f"(:action {a.name}", domain_text)
            if n == 1:
                taken.discard(pddl.lower())
                taken.add(a.name.lower())
                pddl = a.name
        names[pddl.lower()] = a
    return domain_text, problem_text, names


def register(env: Optional["up.environment.Environment"] = None) -> None:
    """Adds the engine "nextstate" to a UP environment's factory (the global one by default)."""
    env = env or up.environment.get_environment()
    if "nextstate" not in env.factory.engines:
        env.factory.add_engine("nextstate", "up_nextstate.engine", "NextstateEngine")
