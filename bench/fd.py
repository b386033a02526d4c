#!/usr/bin/env python3
"""nextstate against Fast Downward, side by side on the same problems.

For every problem of a list, sequentially (never two timed runs at once):
  blind  nextstate `solve --search astar --heuristic blind`  vs  FD `astar(blind())`:
         expansions, search seconds, expansions per second, ratio nextstate/FD.
  sat    nextstate `solve --search gbfs --heuristic ff`      vs  FD `--alias lama-first`:
         solved, plan length, plan valid (checked by `nextstate validate`), wall time.
         With NS_SAT_SEARCH=lama nextstate runs `solve --search lama` (its LAMA-first)
         instead: the same configuration on both sides.  The summary gives evaluations per
         CPU second of search (ratio nextstate/FD) and per expansion, e.g. against
         FD_SAT_SEARCH="lazy_greedy([ff()],preferred=[ff()])" or its eager_greedy twin,
         and with NS_BASE the search-CPU speed-up new over base.
  ff     nextstate `solve --search lazy --heuristic ff`      vs  FD `lazy_greedy([ff()],
         preferred=[ff()])` (the same search: GBFS, deferred evaluation, h^FF helpful
         actions as preferred operators): evaluations, expansions, evaluations per CPU
         second of search and per expansion, ratio of evaluation rates; every problem
         of the list (a trailing blind or sat does not exclude it).  Not a default mode.

CPU time is compared with CPU time.  FD's "Search time" is its own CPU clock
(utils::Timer reads clock_gettime(CLOCK_PROCESS_CPUTIME_ID)) and excludes the
translator and reading output.sas.  nextstate's JSON "seconds" is wall time
(CLOCK_MONOTONIC), so it is not used for rates: nextstate's search CPU is the CPU
time of the `solve` process (its rusage, user + system) minus the CPU time of a
`nextstate ground` run of the same problem (parsing + grounding, measured once per
problem).  Every process's CPU time (rusage, children included: FD's driver,
translator and search) and wall time are reported too.

With NS_BASE=/path/to/other/nextstate every nextstate run is repeated with that
binary right after (interleaved, same problem), so a before/after comparison comes
from one run under one load: columns "base", ratio new/base.

Environment:
  BUILD               build folder holding `nextstate` (default build)
  BENCH_QUICK=1       the quick list (bench/problems-quick.txt) and a 10 s limit
  BENCH_PROBLEMS      problem list file (default bench/problems.txt); format in that file
  BENCH_TIME_LIMIT    seconds per run (default 60, quick 10)
  BENCH_MEMORY_LIMIT  MB per run (default 4000)
  BENCH_MODES         blind,sat,ff (default blind,sat)
  BENCH_MIN_SECONDS   a problem enters the expansion-rate geometric mean only when
                      both searches ran at least this long (default 0.05)
  BENCH_OUT           output prefix (default results/bench_fd: .csv, .json, .md (the
                      tables in Markdown), and _problems/ holding the generated problems)
  BENCH_FF_MIN_SECONDS  the same for the evaluation-rate mean of mode ff (default 0.01: lazy
                      GBFS-h^FF solves most problems of the list in milliseconds)
  NEXTSTATE_BENCHMARKS  reference problems (default ../shared/benchmarks)
  FD_DRIVER           fast-downward.py to use (default: the one in up_fast_downward)
  FD_SAT_SEARCH       FD's search in sat mode instead of --alias lama-first, e.g.
                      "eager_greedy([ff()])" or "lazy_greedy([ff()],preferred=[ff()])"
  NS_SAT_SEARCH       nextstate's search in sat mode: gbfs (default, with h^FF) or lama
  NS_BASE             a second nextstate binary run beside the first (before/after)
Only the Python standard library is used.
"""
import csv
import importlib.util
import json
import math
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env = os.environ.get
QUICK = env("BENCH_QUICK", "0") not in ("", "0")
NS = os.path.join(ROOT, env("BUILD", "build"), "nextstate")
LIMIT = float(env("BENCH_TIME_LIMIT", "10" if QUICK else "60"))
MEMORY = int(env("BENCH_MEMORY_LIMIT", "4000"))
MODES = env("BENCH_MODES", "blind,sat").split(",")
MIN_SECONDS = float(env("BENCH_MIN_SECONDS", "0.05"))
FF_MIN_SECONDS = float(env("BENCH_FF_MIN_SECONDS", "0.01"))
PROBLEMS = env("BENCH_PROBLEMS") or os.path.join(
    ROOT, "bench", "problems-quick.txt" if QUICK else "problems.txt")
OUT = os.path.abspath(env("BENCH_OUT", os.path.join(ROOT, "results", "bench_fd")))
BENCHMARKS = os.path.abspath(env("NEXTSTATE_BENCHMARKS") or os.path.join(ROOT, "..", "shared", "benchmarks"))
NS_BASE = os.path.abspath(env("NS_BASE")) if env("NS_BASE") else None
FD_SAT_SEARCH = env("FD_SAT_SEARCH")
FD_FF_SEARCH = "lazy_greedy([ff()],preferred=[ff()])"
NS_SAT_SEARCH = env("NS_SAT_SEARCH", "gbfs")
KILL_AFTER = LIMIT * 1.5 + 30  # hard wall-clock guard; both planners stop themselves first


def find_fd():
    driver = env("FD_DRIVER")
    if not driver:
        spec = importlib.util.find_spec("up_fast_downward")  # locates, does not import
        if spec is None or not spec.submodule_search_locations:
            sys.exit("bench: up_fast_downward is not installed (pip install up-fast-downward)")
        driver = os.path.join(list(spec.submodule_search_locations)[0], "downward", "fast-downward.py")
    if not os.path.isfile(driver):
        sys.exit(f"bench: no Fast Downward driver at {driver}")
    return driver


def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def run(cmd, cwd=None, with_cpu=False):
    """Runs cmd; returns (exit code, stdout, stderr, wall seconds); code None if killed.
    with_cpu: a fifth value, the CPU seconds (user + system) of the process and the
    descendants it waited for (runs are sequential, so the RUSAGE_CHILDREN delta)."""
    c0 = children_cpu()
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=KILL_AFTER)
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        code, out, err = None, e.stdout or "", e.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    wall = time.perf_counter() - t0
    if with_cpu:
        return code, out, err, wall, children_cpu() - c0
    return code, out, err, wall


# ---------------------------------------------------------------- problem list

def read_problems(path, gendir):
    """Yields (domain label, domain file, problem file, modes) for each line of the list."""
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = shlex.split(line)
        modes = set(MODES)
        if words[-1] in ("blind", "sat"):
            modes &= {words.pop(), "ff"}
        if not modes:
            continue
        if words[0] == "gen":
            name = words[1]
            prob = os.path.join(gendir, "-".join([name] + [w.lstrip("-") for w in words[2:]]) + ".pddl")
            code, _, err, _ = run([NS, "gen", name, *words[2:], "-o", prob])
            if code != 0:
                sys.exit(f"{path}:{n}: nextstate gen failed: {err.strip()}")
            yield "gen/" + name, os.path.join(ROOT, "domains", name, "domain.pddl"), prob, modes
            continue
        prob = os.path.normpath(os.path.join(BENCHMARKS, words[0]))
        if not os.path.isfile(prob):
            print(f"bench: skipping {words[0]} (not found under {BENCHMARKS})", file=sys.stderr)
            continue
        if len(words) > 1:
            dom = os.path.join(BENCHMARKS, words[1])
        else:  # domain.pddl next to the problem (acpbench) or one folder up (seedA)
            here = os.path.dirname(prob)
            dom = os.path.join(here, "domain.pddl")
            if not os.path.isfile(dom):
                dom = os.path.join(os.path.dirname(here), "domain.pddl")
        parts = words[0].split("/")
        label = f"{parts[0]}/{parts[2]}" if parts[0] == "seedA" else f"{parts[0]}/{parts[1]}"
        yield label, dom, prob, modes


# ---------------------------------------------------------------- the two planners

GROUND_CPU = {}


def ground_cpu(ns, dom, prob):
    """CPU seconds of parsing + grounding (a `nextstate ground` run), once per binary and problem."""
    key = (ns, dom, prob)
    if key not in GROUND_CPU:
        code, _, _, _, cpu = run([ns, "ground", dom, prob], with_cpu=True)
        GROUND_CPU[key] = cpu if code == 0 else None
    return GROUND_CPU[key]


def nextstate(dom, prob, search, heuristic, plan_file, ns=NS):
    cmd = [ns, "solve", dom, prob, "--search", search, "--heuristic", heuristic, "--json",
           "--time-limit", str(LIMIT), "--memory-limit", str(MEMORY), "--plan-file", plan_file]
    code, out, err, wall, cpu = run(cmd, with_cpu=True)
    r = {"code": code, "wall": wall, "cpu": cpu}
    try:
        j = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        r["status"] = "killed" if code is None else f"error {code}: {' '.join(err.split())[:160]}"
        return r
    r.update(status=j["status"], solved=j["solved"], expanded=j["expanded"],
             generated=j["generated"], search_s=j["seconds"], ground_s=j["ground_seconds"],
             evaluated=j.get("evaluated"), plan_length=j["plan_length"] if j["solved"] else None,
             atoms=j.get("atoms"), operators=j.get("operators"))
    g = ground_cpu(ns, dom, prob)
    r["ground_cpu"] = g
    r["search_cpu"] = max(cpu - g, 0.0) if g is not None else None
    return r


FD_STATUS = {0: "solved", 10: "unsolvable", 11: "unsolvable", 12: "incomplete",  # driver's codes
             22: "out of memory", 23: "out of time", 24: "out of memory", None: "killed"}


def fast_downward(driver, dom, prob, driver_args, search_args, tmpdir):
    cmd = [sys.executable, driver, "--overall-time-limit", f"{LIMIT:g}s",
           "--overall-memory-limit", f"{MEMORY}M", *driver_args, dom, prob, *search_args]
    code, out, err, wall, cpu = run(cmd, cwd=tmpdir, with_cpu=True)
    r = {"code": code, "wall": wall, "cpu": cpu, "status": FD_STATUS.get(code, f"error {code}")}
    r["solved"] = code == 0
    for key, pattern, kind in (("expanded", r"Expanded (\d+) state", int),
                               ("generated", r"Generated (\d+) state", int),
                               ("evaluated", r"Evaluated (\d+) state", int),
                               ("search_s", r"Search time: ([\d.]+)s", float),
                               ("plan_length", r"Plan length: (\d+) step", int),
                               ("operators", r"Translator operators: (\d+)", int)):
        m = re.findall(pattern, out)
        if m:
            r[key] = kind(m[-1])
    r["search_cpu"] = r.get("search_s")  # FD's own CPU clock
    if code not in FD_STATUS:
        r["status"] += ": " + " ".join((err or out).split())[-160:]
    return r


def validate(dom, prob, plan_file):
    code, _, _, _ = run([NS, "validate", dom, prob, plan_file])
    return code == 0


def busy():
    """Prints a warning when other processes compete for the CPUs; returns the load."""
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    if load > 0.5 * cpus:
        print(f"warning: load average {load:.1f} on {cpus} CPUs: other processes compete, "
              f"timings and ratios are noisy")
    return load


def rate(r):
    """Expansions per CPU second of search."""
    if r.get("expanded") is None or not r.get("search_cpu"):
        return None
    return r["expanded"] / r["search_cpu"] if r["search_cpu"] >= 1e-3 else None


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


# ---------------------------------------------------------------- main

def fmt(x, spec=""):
    if x is None:
        return "-"
    return format(x, spec) if spec else str(x)


def main():
    if not os.access(NS, os.X_OK):
        sys.exit(f"bench: {NS} missing; run `make bench`")
    driver = find_fd()
    os.makedirs(os.path.dirname(OUT) or ".", exist_ok=True)
    print(f"nextstate {NS}\nFast Downward {driver}\nproblems {PROBLEMS}; "
          f"time limit {LIMIT:g} s, memory {MEMORY} MB; modes {','.join(MODES)}")
    load_before = busy()
    print()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_fd.") as tmp:
        gendir = OUT + "_problems"  # generated problems are kept for a second look
        os.makedirs(gendir, exist_ok=True)
        problems = list(read_problems(PROBLEMS, gendir))
        hb = (f"{'domain':26} {'problem':34} | {'ns exp':>9} {'ns cpu':>7} {'ns exp/s':>9} | "
              f"{'FD exp':>9} {'FD cpu':>7} {'FD exp/s':>9} | {'ratio':>6} | {'ns wall':>7} {'FD wall':>7}"
              + (f" | {'base exp/s':>10} {'base/FD':>7} {'new/base':>8}" if NS_BASE else ""))
        fd_sat_name = FD_SAT_SEARCH or "lama-first"
        hs = (f"{'':26} {'':34} | {'ns ' + (NS_SAT_SEARCH if NS_SAT_SEARCH != 'gbfs' else 'gbfs-ff'):>14} {'cpu':>7} | {fd_sat_name[:14]:>14} {'cpu':>7}"
              + (f" | {'base':>14} {'cpu':>7} {'new/base':>8}" if NS_BASE else ""))
        print("blind: A* blind, expansions per CPU second of search; ratio = nextstate/FD   "
              "| sat: solved plan length (or status), * = invalid plan; process CPU seconds")
        hf = (f"{'':26} {'ff: lazy GBFS-h^FF':34} | {'ns eval':>9} {'cpu':>7} {'eval/s':>9} {'ev/exp':>6} | "
              f"{'FD eval':>9} {'cpu':>7} {'eval/s':>9} {'ev/exp':>6} | {'ratio':>6} | {'ns len':>6} {'FD len':>6}")
        print("\n".join(h for m, h in (("blind", hb), ("sat", hs), ("ff", hf)) if m in MODES))
        for label, dom, prob, modes in problems:
            name = os.path.basename(prob)[:-5]
            row = {"domain": label, "problem": name, "domain_file": dom, "problem_file": prob}
            plan = os.path.join(tmp, "ns.plan")
            if "blind" in modes:
                ns = nextstate(dom, prob, "astar", "blind", plan)
                with tempfile.TemporaryDirectory(dir=tmp) as d:
                    fd = fast_downward(driver, dom, prob, [], ["--search", "astar(blind())"], d)
                ns_rate, fd_rate = rate(ns), rate(fd)
                ratio = ns_rate / fd_rate if ns_rate and fd_rate else None
                base_cols = ""
                if NS_BASE:
                    bs = nextstate(dom, prob, "astar", "blind", plan, ns=NS_BASE)
                    b_rate = rate(bs)
                    row.update({f"blind_base_{k}": v for k, v in bs.items()})
                    row.update(blind_base_rate=b_rate,
                               blind_base_ratio=b_rate / fd_rate if b_rate and fd_rate else None,
                               blind_new_over_base=ns_rate / b_rate if ns_rate and b_rate else None,
                               blind_base_in_mean=bool(b_rate and fd_rate)
                               and (bs.get("search_cpu") or 0) >= MIN_SECONDS)
                    base_cols = (f" | {fmt(b_rate, '.3g'):>10} {fmt(row['blind_base_ratio'], '.2f'):>7} "
                                 f"{fmt(row['blind_new_over_base'], '.2f'):>8}")
                row.update({f"blind_ns_{k}": v for k, v in ns.items()})
                row.update({f"blind_fd_{k}": v for k, v in fd.items()})
                row.update(blind_ns_rate=ns_rate, blind_fd_rate=fd_rate, blind_ratio=ratio,
                           blind_in_mean=bool(ratio) and (ns.get("search_cpu") or 0) >= MIN_SECONDS
                           and (fd.get("search_cpu") or 0) >= MIN_SECONDS)
                print(f"{label[:26]:26} {name[:34]:34} | {fmt(ns.get('expanded')):>9} "
                      f"{fmt(ns.get('search_cpu'), '.3f'):>7} {fmt(ns_rate, '.3g'):>9} | "
                      f"{fmt(fd.get('expanded')):>9} {fmt(fd.get('search_cpu'), '.3f'):>7} "
                      f"{fmt(fd_rate, '.3g'):>9} | {fmt(ratio, '.2f'):>6} | "
                      f"{ns['wall']:7.2f} {fd['wall']:7.2f}" + base_cols
                      + ("" if ns.get("solved") and fd.get("solved") else
                         f"   [ns: {ns['status']}; FD: {fd['status']}]"), flush=True)
            if "sat" in modes:
                ns = nextstate(dom, prob, NS_SAT_SEARCH, "ff", plan)
                if ns.get("solved"):
                    ns["valid"] = validate(dom, prob, plan)
                with tempfile.TemporaryDirectory(dir=tmp) as d:
                    if FD_SAT_SEARCH:
                        fd = fast_downward(driver, dom, prob, [], ["--search", FD_SAT_SEARCH], d)
                    else:
                        fd = fast_downward(driver, dom, prob, ["--alias", "lama-first"], [], d)
                    if fd["solved"]:
                        fd["valid"] = validate(dom, prob, os.path.join(d, "sas_plan"))
                row.update({f"sat_ns_{k}": v for k, v in ns.items()})
                row.update({f"sat_fd_{k}": v for k, v in fd.items()})
                sat_base = ""
                if NS_BASE:
                    bs = nextstate(dom, prob, NS_SAT_SEARCH, "ff", plan, ns=NS_BASE)
                    row.update({f"sat_base_{k}": v for k, v in bs.items()})
                    nb = ns["cpu"] / bs["cpu"] if bs.get("cpu") and ns.get("solved") and bs.get("solved") else None
                    row["sat_new_over_base_cpu"] = nb
                    bcell = f"{bs.get('plan_length')}" if bs.get("solved") else bs["status"][:14]
                    sat_base = f" | {bcell:>14} {bs['cpu']:7.2f} {fmt(nb, '.2f'):>8}"

                def cell(r):
                    if not r.get("solved"):
                        return r["status"][:14]
                    return f"{r.get('plan_length')}{'' if r.get('valid') else '*'}"
                first = "" if "blind" in modes else label[:26]
                second = "  sat:" if "blind" in modes else "sat: " + name[:29]
                print(f"{first:26} {second:34} | {cell(ns):>14} {ns['cpu']:7.2f} | "
                      f"{cell(fd):>14} {fd['cpu']:7.2f}" + sat_base, flush=True)
            if "ff" in modes:
                run_ff(driver, dom, prob, label, name, plan, tmp, row, modes)
            rows.append(row)

    summary = summarize(rows)
    summary["load_average"] = [load_before, busy()]
    keys = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    with open(OUT + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    with open(OUT + ".json", "w") as f:
        json.dump({"time_limit": LIMIT, "memory_limit_mb": MEMORY, "problems_file": PROBLEMS,
                   "fd_driver": driver, "summary": summary, "rows": rows}, f, indent=1)
    with open(OUT + ".md", "w") as f:
        f.write(markdown(rows, summary))
    print(f"\nper-problem results: {OUT}.csv, {OUT}.json, {OUT}.md")


def eval_rate(r):
    """Evaluations per CPU second of search."""
    if r.get("evaluated") is None or not r.get("search_cpu") or r["search_cpu"] < 1e-3:
        return None
    return r["evaluated"] / r["search_cpu"]


def per_expansion(r):
    return r["evaluated"] / r["expanded"] if r.get("evaluated") is not None and r.get("expanded") else None


def run_ff(driver, dom, prob, label, name, plan, tmp, row, modes):
    """Lazy GBFS-h^FF with preferred operators, nextstate against FD, on one problem."""
    ns = nextstate(dom, prob, "lazy", "ff", plan)
    if ns.get("solved"):
        ns["valid"] = validate(dom, prob, plan)
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        fd = fast_downward(driver, dom, prob, [], ["--search", FD_FF_SEARCH], d)
        if fd["solved"]:
            fd["valid"] = validate(dom, prob, os.path.join(d, "sas_plan"))
    nr, fr = eval_rate(ns), eval_rate(fd)
    row.update({f"ff_ns_{k}": v for k, v in ns.items()})
    row.update({f"ff_fd_{k}": v for k, v in fd.items()})
    row.update(ff_ns_eval_rate=nr, ff_fd_eval_rate=fr, ff_ns_eval_per_exp=per_expansion(ns),
               ff_fd_eval_per_exp=per_expansion(fd), ff_ratio=nr / fr if nr and fr else None,
               ff_in_mean=bool(nr and fr) and (ns.get("search_cpu") or 0) >= FF_MIN_SECONDS
               and (fd.get("search_cpu") or 0) >= FF_MIN_SECONDS)

    def length(r):
        if not r.get("solved"):
            return r["status"][:6]
        return f"{r.get('plan_length')}{'' if r.get('valid') else '*'}"
    first = "" if modes & {"blind", "sat"} else label[:26]
    second = "  ff:" if modes & {"blind", "sat"} else "ff: " + name[:30]
    print(f"{first:26} {second:34} | {fmt(ns.get('evaluated')):>9} {fmt(ns.get('search_cpu'), '.3f'):>7} "
          f"{fmt(nr, '.3g'):>9} {fmt(row['ff_ns_eval_per_exp'], '.2f'):>6} | {fmt(fd.get('evaluated')):>9} "
          f"{fmt(fd.get('search_cpu'), '.3f'):>7} {fmt(fr, '.3g'):>9} {fmt(row['ff_fd_eval_per_exp'], '.2f'):>6} | "
          f"{fmt(row['ff_ratio'], '.2f'):>6} | {length(ns):>6} {length(fd):>6}", flush=True)


def summarize(rows):
    s = {}
    blind = [r for r in rows if "blind_ns_status" in r]
    if blind:
        print(f"\nexpansions/s ratio nextstate/FD, geometric mean over problems where both "
              f"searches ran >= {MIN_SECONDS:g} s:")
        by = {}
        for r in blind:
            if r["blind_in_mean"]:
                by.setdefault(r["domain"], []).append(r["blind_ratio"])
        for d, xs in by.items():
            print(f"  {d:34} {geomean(xs):6.2f}  ({len(xs)} problems, "
                  f"min {min(xs):.2f}, max {max(xs):.2f})")
        allx = [x for xs in by.values() for x in xs]
        g = geomean(allx)
        print(f"  {'GEOMEAN all':34} {fmt(g, '6.2f')}  ({len(allx)} problems)")
        if NS_BASE:
            bx = [r["blind_base_ratio"] for r in blind if r.get("blind_base_in_mean") and r["blind_in_mean"]]
            nb = [r["blind_new_over_base"] for r in blind if r.get("blind_new_over_base")
                  and r.get("blind_base_in_mean") and r["blind_in_mean"]]
            s["blind_base"] = {"geomean_base_over_fd": geomean(bx), "geomean_new_over_base": geomean(nb),
                               "problems": len(nb), "base": NS_BASE}
            print(f"  base ({NS_BASE}) / FD geomean {fmt(geomean(bx), '.2f')} ({len(bx)} problems); "
                  f"new/base expansions per CPU second geomean {fmt(geomean(nb), '.2f')} ({len(nb)} problems)")

        def answered(who):  # solved, or proved unsolvable
            return sum(r.get(f"blind_{who}_status") in ("solved", "unsolvable") for r in blind)
        s["blind"] = {"geomean_ratio": g, "problems_in_mean": len(allx), "problems": len(blind),
                      "per_domain": {d: geomean(xs) for d, xs in by.items()},
                      "ns_answered": answered("ns"), "fd_answered": answered("fd"),
                      "ns_search_s_sum": sum(r.get("blind_ns_search_s") or 0 for r in blind),
                      "ns_wall_sum": sum(r["blind_ns_wall"] for r in blind),
                      "fd_wall_sum": sum(r["blind_fd_wall"] for r in blind)}
        x = s["blind"]
        print(f"  A* blind answered (solved or proved unsolvable): nextstate {x['ns_answered']}/"
              f"{len(blind)}, FD {x['fd_answered']}/{len(blind)}; total wall "
              f"{x['ns_wall_sum']:.1f} s vs {x['fd_wall_sum']:.1f} s")
    sat = [r for r in rows if "sat_ns_status" in r]
    if sat:
        def cov(who):
            return sum(bool(r.get(f"sat_{who}_solved") and r.get(f"sat_{who}_valid")) for r in sat)
        both = [r for r in sat if r.get("sat_ns_valid") and r.get("sat_fd_valid")]
        s["sat"] = {"ns_coverage": cov("ns"), "fd_coverage": cov("fd"), "problems": len(sat),
                    "both_solved": len(both),
                    "ns_plan_length_sum": sum(r["sat_ns_plan_length"] for r in both),
                    "fd_plan_length_sum": sum(r["sat_fd_plan_length"] for r in both),
                    "ns_wall_sum": sum(r["sat_ns_wall"] for r in sat),
                    "fd_wall_sum": sum(r["sat_fd_wall"] for r in sat),
                    "wall_ratio_geomean_both_solved":
                        geomean([r["sat_ns_wall"] / r["sat_fd_wall"] for r in both])}
        if NS_BASE:
            nb = [r["sat_new_over_base_cpu"] for r in sat if r.get("sat_new_over_base_cpu")]
            s["sat"]["new_over_base_cpu_geomean"] = geomean(nb)
            print(f"\nGBFS-h^FF process CPU new/base geomean {fmt(geomean(nb), '.2f')} ({len(nb)} both solved)")
        # evaluations per CPU second of search and per expansion (the issue's goal 2 when
        # FD_SAT_SEARCH is lazy_greedy([ff()],preferred=[ff()]) or its eager_greedy twin)
        def sat_rates(who, peer):
            rs = [r for r in sat if (r.get(f"sat_{who}_search_cpu") or 0) >= FF_MIN_SECONDS
                  and (r.get(f"sat_{peer}_search_cpu") or 0) >= FF_MIN_SECONDS
                  and r.get(f"sat_{who}_evaluated") and r.get(f"sat_{peer}_evaluated")]
            return [(r[f"sat_{who}_evaluated"] / r[f"sat_{who}_search_cpu"])
                    / (r[f"sat_{peer}_evaluated"] / r[f"sat_{peer}_search_cpu"]) for r in rs]
        ev = sat_rates("ns", "fd")
        s["sat"]["eval_rate_ratio_geomean"] = geomean(ev)
        s["sat"]["eval_rate_problems"] = len(ev)
        for who in ("ns", "fd") + (("base",) if NS_BASE else ()):
            s["sat"][f"{who}_eval_per_exp_geomean"] = geomean(
                [r[f"sat_{who}_evaluated"] / r[f"sat_{who}_expanded"] for r in sat
                 if r.get(f"sat_{who}_evaluated") and r.get(f"sat_{who}_expanded")])
        print(f"\nGBFS-h^FF vs FD {FD_SAT_SEARCH or 'lama-first'}: evaluations per CPU second of search, ratio geomean "
              f"{fmt(geomean(ev), '.2f')} ({len(ev)} problems, both >= {FF_MIN_SECONDS:g} s); evaluations per "
              f"expansion geomean {fmt(s['sat']['ns_eval_per_exp_geomean'], '.2f')} vs "
              f"{fmt(s['sat']['fd_eval_per_exp_geomean'], '.2f')}")
        if NS_BASE:
            nb = [r["sat_base_search_cpu"] / r["sat_ns_search_cpu"] for r in sat
                  if r.get("sat_ns_solved") and r.get("sat_base_solved")
                  and min(r.get("sat_ns_search_cpu") or 0, r.get("sat_base_search_cpu") or 0) >= FF_MIN_SECONDS]
            eb = sat_rates("ns", "base")
            s["sat"]["base_over_new_search_cpu_geomean"] = geomean(nb)
            s["sat"]["new_over_base_eval_rate_geomean"] = geomean(eb)
            print(f"  speed-up new over base: search CPU base/new geomean {fmt(geomean(nb), '.2f')} "
                  f"({len(nb)} both solved, both >= {FF_MIN_SECONDS:g} s); evaluations per CPU second "
                  f"new/base {fmt(geomean(eb), '.2f')} ({len(eb)} problems)")
        x = s["sat"]
        print(f"\nGBFS-h^FF vs FD {FD_SAT_SEARCH or 'lama-first'}: coverage (valid plans) nextstate {x['ns_coverage']}/"
              f"{len(sat)}, FD {x['fd_coverage']}/{len(sat)}\n  on the {len(both)} both solved: "
              f"plan length sum {x['ns_plan_length_sum']} vs {x['fd_plan_length_sum']}, "
              f"wall time ratio nextstate/FD geomean "
              f"{fmt(x['wall_ratio_geomean_both_solved'], '.2f')}\n  total wall over all "
              f"{len(sat)}: {x['ns_wall_sum']:.1f} s vs {x['fd_wall_sum']:.1f} s")
    ff = [r for r in rows if "ff_ns_status" in r]
    if ff:
        xs = [r["ff_ratio"] for r in ff if r["ff_in_mean"]]
        both = [r for r in ff if r.get("ff_ns_valid") and r.get("ff_fd_valid")]
        s["ff"] = {"fd_search": FD_FF_SEARCH, "geomean_eval_rate_ratio": geomean(xs), "problems_in_mean": len(xs),
                   "problems": len(ff),
                   "ns_coverage": sum(bool(r.get("ff_ns_valid")) for r in ff),
                   "fd_coverage": sum(bool(r.get("ff_fd_valid")) for r in ff),
                   "geomean_ns_eval_per_exp": geomean([r["ff_ns_eval_per_exp"] for r in both if r["ff_ns_eval_per_exp"]]),
                   "geomean_fd_eval_per_exp": geomean([r["ff_fd_eval_per_exp"] for r in both if r["ff_fd_eval_per_exp"]])}
        x = s["ff"]
        print(f"\nlazy GBFS-h^FF (preferred operators) vs FD {FD_FF_SEARCH}: evaluations per CPU second "
              f"ratio geomean {fmt(x['geomean_eval_rate_ratio'], '.2f')} ({len(xs)} problems >= {FF_MIN_SECONDS:g} s); "
              f"coverage {x['ns_coverage']}/{len(ff)} vs {x['fd_coverage']}/{len(ff)}; evaluations per expansion "
              f"geomean {fmt(x['geomean_ns_eval_per_exp'], '.2f')} vs {fmt(x['geomean_fd_eval_per_exp'], '.2f')}")
    notes = notable(rows)
    if notes:
        print("\nnotable (nextstate slower, failing or invalid where FD is not):")
        print("\n".join("  " + n for n in notes))
    s["notable"] = notes
    return s


def notable(rows):
    notes = []
    fd_name = FD_SAT_SEARCH or "lama-first"
    for r in rows:
        where = f"{r['problem_file']}:"
        if "blind_ns_status" in r:
            ok = ("solved", "unsolvable")
            if r["blind_fd_status"] in ok and r["blind_ns_status"] not in ok:
                notes.append(f"{where} A* blind: nextstate {r['blind_ns_status']}, FD answered")
            elif r["blind_in_mean"] and r["blind_ratio"] < 0.8:
                notes.append(f"{where} A* blind: expansions/s ratio {r['blind_ratio']:.2f}")
            elif r["blind_ns_status"] in ok and r["blind_ns_wall"] > 2 * r["blind_fd_wall"] + 0.5:
                notes.append(f"{where} A* blind: wall {r['blind_ns_wall']:.1f} s vs FD "
                             f"{r['blind_fd_wall']:.1f} s (expanded {r['blind_ns_expanded']} vs "
                             f"{r.get('blind_fd_expanded')}: FD's translated task is smaller)")
        if "sat_ns_status" in r:
            if r.get("sat_ns_solved") and not r.get("sat_ns_valid"):
                notes.append(f"{where} GBFS-h^FF: nextstate's plan is INVALID")
            if r["sat_fd_solved"] and not r.get("sat_fd_valid"):
                notes.append(f"{where} FD {fd_name}: `nextstate validate` rejects FD's plan")
            if r.get("sat_fd_valid") and not r.get("sat_ns_solved"):
                notes.append(f"{where} GBFS-h^FF: nextstate {r['sat_ns_status']} after "
                             f"{r['sat_ns_wall']:.1f} s, FD {fd_name} solved in "
                             f"{r['sat_fd_wall']:.1f} s (length {r['sat_fd_plan_length']})")
            elif r.get("sat_ns_valid") and r.get("sat_fd_valid") and \
                    r["sat_ns_wall"] > 2 * r["sat_fd_wall"] + 1:
                notes.append(f"{where} GBFS-h^FF: wall {r['sat_ns_wall']:.1f} s vs FD {fd_name} "
                             f"{r['sat_fd_wall']:.1f} s")
    return notes




def markdown(rows, s):
    """The tables of a run in Markdown."""
    def f(x, spec=""):
        return fmt(x, spec)
    out = [f"# nextstate vs Fast Downward\n\nproblems `{os.path.basename(PROBLEMS)}`, time limit {LIMIT:g} s, "
           f"memory {MEMORY} MB; CPU seconds of search; load average {s.get('load_average')}\n"]
    blind = [r for r in rows if "blind_ns_status" in r]
    if blind:
        out.append("## A* blind: expansions per CPU second (ratio nextstate/FD)\n")
        head = "| domain | problem | ns exp | ns cpu | ns exp/s | FD exp | FD cpu | FD exp/s | ratio | in mean |"
        if NS_BASE:
            head += " base exp/s | base/FD | new/base |"
        out += [head, "|" + "---|" * (head.count("|") - 1)]
        for r in blind:
            line = (f"| {r['domain']} | {r['problem']} | {f(r.get('blind_ns_expanded'))} | "
                    f"{f(r.get('blind_ns_search_cpu'), '.3f')} | {f(r['blind_ns_rate'], '.3g')} | "
                    f"{f(r.get('blind_fd_expanded'))} | {f(r.get('blind_fd_search_cpu'), '.3f')} | "
                    f"{f(r['blind_fd_rate'], '.3g')} | {f(r['blind_ratio'], '.2f')} | {'yes' if r['blind_in_mean'] else 'no'} |")
            if NS_BASE:
                line += (f" {f(r.get('blind_base_rate'), '.3g')} | {f(r.get('blind_base_ratio'), '.2f')} | "
                         f"{f(r.get('blind_new_over_base'), '.2f')} |")
            out.append(line)
        b = s["blind"]
        inm = [r["blind_ratio"] for r in blind if r["blind_in_mean"]]
        out.append(f"\n**geomean ratio {f(b['geomean_ratio'], '.2f')}** over {b['problems_in_mean']} problems "
                   f"(both searches >= {MIN_SECONDS:g} s), min {f(min(inm) if inm else None, '.2f')}")
        if NS_BASE:
            bb = s["blind_base"]
            out.append(f"; base/FD {f(bb['geomean_base_over_fd'], '.2f')}, new/base "
                       f"{f(bb['geomean_new_over_base'], '.2f')}")
        out.append("\n")
    ff = [r for r in rows if "ff_ns_status" in r]
    if ff:
        out.append(f"## Lazy GBFS-h^FF with preferred operators vs FD `{FD_FF_SEARCH}`\n")
        head = ("| domain | problem | ns eval | ns exp | ns cpu | ns eval/s | ns eval/exp | ns len | "
                "FD eval | FD exp | FD cpu | FD eval/s | FD eval/exp | FD len | eval/s ratio |")
        out += [head, "|" + "---|" * (head.count("|") - 1)]

        def ln(r, who):
            if not r.get(f"ff_{who}_solved"):
                return r.get(f"ff_{who}_status", "-")
            return f"{r.get(f'ff_{who}_plan_length')}{'' if r.get(f'ff_{who}_valid') else '*'}"
        for r in ff:
            out.append(f"| {r['domain']} | {r['problem']} | {f(r.get('ff_ns_evaluated'))} | {f(r.get('ff_ns_expanded'))} | "
                       f"{f(r.get('ff_ns_search_cpu'), '.3f')} | {f(r['ff_ns_eval_rate'], '.3g')} | "
                       f"{f(r['ff_ns_eval_per_exp'], '.2f')} | {ln(r, 'ns')} | {f(r.get('ff_fd_evaluated'))} | "
                       f"{f(r.get('ff_fd_expanded'))} | {f(r.get('ff_fd_search_cpu'), '.3f')} | "
                       f"{f(r['ff_fd_eval_rate'], '.3g')} | {f(r['ff_fd_eval_per_exp'], '.2f')} | {ln(r, 'fd')} | "
                       f"{f(r['ff_ratio'], '.2f')} |")
        x = s["ff"]
        out.append(f"\n**evaluations/s ratio geomean {f(x['geomean_eval_rate_ratio'], '.2f')}** over "
                   f"{x['problems_in_mean']} problems (both >= {FF_MIN_SECONDS:g} s); coverage (valid plans) "
                   f"{x['ns_coverage']}/{x['problems']} vs {x['fd_coverage']}/{x['problems']}; evaluations per "
                   f"expansion geomean (both solved) {f(x['geomean_ns_eval_per_exp'], '.2f')} vs "
                   f"{f(x['geomean_fd_eval_per_exp'], '.2f')}\n")
    return "\n".join(out) + "\n"

if __name__ == "__main__":
    main()
