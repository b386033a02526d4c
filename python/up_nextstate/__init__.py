"""A Unified Planning OneshotPlanner engine backed by nextstate.

    import up_nextstate                      # registers the engine "nextstate"
    from unified_planning.shortcuts import OneshotPlanner
    with OneshotPlanner(name="nextstate") as planner:
        result = planner.solve(problem)      # a UP PlanGenerationResult

The problem is written to PDDL with UP's own PDDLWriter, grounded and solved
in-process by the nextstate library (``nextstate.Task.solve``: A* with
LM-cut by default; ``params={"search": "gbfs", "heuristic": "ff"}``,
``{"search": "lama"}`` etc.) or planned by a learned model
(``params={"model": "m.hwl"}``: ``nextstate.Model.plan``), and the plan is
mapped back to UP action instances.  Importing the module
registers the engine with UP's global environment (``register()`` does it for
another environment)."""
from __future__ import annotations

from .engine import NextstateEngine, register

__all__ = ["NextstateEngine", "register"]

register()
