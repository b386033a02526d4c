#!/usr/bin/python3
"""Per-transition latency of a trained nextstate world model run in PyTorch
(CPU, inference mode), for bench/latency_torch.sh: the same checkpoint's
weights, the same dense features, test queries and 128-candidate pools, and
the same five measurements as `nextstate eval --latency` (evaluate.h):

  full          (a) batch 1: π_s(E(s)), π_a(E(a)), T, L2-normalise, score the
                    pool's cached normalised projections, best score
  full_batch    (a) in batches of 64 queries, per transition
  transition    (b) batch 1: T on cached h_s, h_a, normalise, score
  split         (b) batch 1 with T split into its state-only and action-only
                    parts, cached (world.h "T SPLIT FOR SEARCH")
  expand        (b) the split T for every applicable action of the query
                    state at once, scored, per transition

Also checks that the model computes what nextstate computes: test Hit@5 with
worst-case ties, against `nextstate eval`'s (passed in by the script).
Prints one JSON object.
"""
import argparse
import json
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load_checkpoint(path):
    b = open(path, "rb").read()
    if b[:8] != b"NSPARAMS":
        raise SystemExit(f"{path}: not a nextstate checkpoint")
    _ver, _flags, n, mlen = struct.unpack_from("<4I", b, 8)
    meta = json.loads(b[40:40 + mlen].decode())
    pos = 8 + 16 + 16 + mlen
    table = []
    for _ in range(n):
        (nl,) = struct.unpack_from("<H", b, pos)
        name = b[pos + 2:pos + 2 + nl].decode()
        pos += 2 + nl
        nd = b[pos]
        shape = struct.unpack_from(f"<{nd}q", b, pos + 1)
        pos += 1 + 8 * nd
        table.append((name, shape))
    t = {}
    for name, shape in table:
        cnt = int(np.prod(shape))
        t[name] = torch.from_numpy(np.frombuffer(b, dtype="<f4", count=cnt, offset=pos).reshape(shape).copy())
        pos += 4 * cnt
    return t, meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("split")
    ap.add_argument("model")
    ap.add_argument("states")
    ap.add_argument("actions")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ns-hit5-worst", type=float, default=None)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    P, meta = load_checkpoint(a.model)
    cfg = meta["config"]
    if cfg.get("kind", "resmlp") != "resmlp":
        raise SystemExit("latency_torch.py: resmlp models only")
    layers, eps = int(cfg["layers"]), 1e-5
    split = json.load(open(f"{a.split}/split.json"))
    if len(split["datasets"]) != 1:
        raise SystemExit("latency_torch.py: one-dataset splits only")
    ds = split["datasets"][0]["dir"]
    test = np.load(f"{a.split}/test.npy")
    pools = np.load(f"{a.split}/pools.npy")
    tr = np.load(f"{ds}/transitions.npy")
    aoff, aops = np.load(f"{ds}/applicable_offsets.npy"), np.load(f"{ds}/applicable_ops.npy")
    man = json.load(open(f"{ds}/manifest.json"))
    nops = [len(p["operators"]) for p in man["problems"]]
    act_off = np.concatenate([[0], np.cumsum(nops)]).astype(np.int64)
    XS = torch.from_numpy(np.load(a.states).astype(np.float32))
    XA = torch.from_numpy(np.load(a.actions).astype(np.float32))
    O = P["ps.out.weight"].shape[0]

    def head(pre, x):
        for l in range(layers - 1):
            x = F.linear(x, P[f"{pre}.{l}.weight"], P[f"{pre}.{l}.bias"])
            x = F.gelu(F.layer_norm(x, x.shape[-1:], P[f"{pre}.{l}.ln.weight"], P[f"{pre}.{l}.ln.bias"], eps))
        return F.linear(x, P[f"{pre}.out.weight"], P[f"{pre}.out.bias"])

    W1, b1, W2, b2 = P["t.w1.weight"], P["t.w1.bias"], P["t.w2.weight"], P["t.w2.bias"]
    Wr, lw, lb = P["t.w_res.weight"], P["t.ln.weight"], P["t.ln.bias"]
    W1s, W1a = W1[:, :O].contiguous(), W1[:, O:].contiguous()

    def T(hs, ha):
        z = F.linear(F.gelu(F.linear(torch.cat([hs, ha], -1), W1, b1)), W2, b2) + F.linear(hs, Wr)
        return F.layer_norm(z, (O,), lw, lb, eps)

    def tstate(hs):
        return F.linear(hs, W1s, b1), F.linear(hs, Wr, b2)

    def tsplit(s1, s2, ta):
        return F.layer_norm(F.linear(F.gelu(s1 + ta), W2) + s2, (O,), lw, lb, eps)

    m = min(a.queries, len(test))
    with torch.inference_mode():
        HSn = F.normalize(head("ps", XS), dim=-1)  # cached candidate projections
        q = test[:m, 1]
        src = torch.from_numpy(tr[q, 1].astype(np.int64))
        arow = torch.from_numpy((act_off[tr[q, 0]] + tr[q, 2]).astype(np.int64))
        xs, xa = XS[src], XA[arow]
        hs, ha = head("ps", xs), head("pa", xa)
        s1, s2 = tstate(hs)
        ta = F.linear(ha, W1a)
        apps = []
        for i, t in enumerate(q):
            s = tr[t, 1]
            rows = act_off[tr[t, 0]] + aops[aoff[s]:aoff[s + 1]]
            apps.append(F.linear(head("pa", XA[torch.from_numpy(rows.astype(np.int64))]), W1a))
        # correctness: Hit@5 (worst-case ties) over every test query, full pipeline
        hits = 0
        for i in range(len(test)):
            t = test[i, 1]
            p = torch.from_numpy(pools[i][pools[i] >= 0])
            pr = F.normalize(T(head("ps", XS[int(tr[t, 1])][None]), head("pa", XA[int(act_off[tr[t, 0]] + tr[t, 2])][None])), dim=-1)
            sc = HSn[p] @ pr[0]
            hits += int((sc >= sc[0]).sum().item() <= 5)
        hit5 = hits / len(test)

        # each regime in a loop of its own, candidates gathered from the table of cached projections
        # (HSn, one row per state) by their pool indices — as nextstate's eval --latency does
        cidx = [torch.from_numpy(p[p >= 0]) for p in pools[:m]]

        def one(g, i):
            c = HSn[cidx[i]]
            if g == "full":
                pr = F.normalize(T(head("ps", xs[i:i + 1]), head("pa", xa[i:i + 1])), dim=-1)
            elif g == "transition":
                pr = F.normalize(T(hs[i:i + 1], ha[i:i + 1]), dim=-1)
            elif g == "split":
                pr = F.normalize(tsplit(s1[i:i + 1], s2[i:i + 1], ta[i:i + 1]), dim=-1)
            else:
                pr = F.normalize(tsplit(s1[i:i + 1], s2[i:i + 1], apps[i]), dim=-1)
                return float((pr @ c.T).max()), len(apps[i])
            return float((c @ pr[0]).max()), 1

        tm = {k: 0.0 for k in ("full", "full_batch", "transition", "split", "expand")}
        cnt = {k: 0 for k in tm}
        reps = {k: 0 for k in tm}
        sink = 0.0
        for g in tm:
            t_start = time.perf_counter()
            while True:
                if g == "full_batch":
                    for i in range(0, m, 64):
                        k = min(64, m - i)
                        t0 = time.perf_counter()
                        pr = F.normalize(T(head("ps", xs[i:i + k]), head("pa", xa[i:i + k])), dim=-1)
                        best = max(float((HSn[cidx[i + j]] @ pr[j]).max()) for j in range(k))
                        tm[g] += time.perf_counter() - t0
                        cnt[g] += k
                        sink += best
                else:
                    for i in range(m):
                        t0 = time.perf_counter()
                        b, n = one(g, i)
                        tm[g] += time.perf_counter() - t0
                        cnt[g] += n
                        sink += b
                reps[g] += 1
                if time.perf_counter() - t_start > 0.2 or reps[g] >= 50:
                    break
    out = {f"{k}_us": tm[k] / cnt[k] * 1e6 for k in tm}
    out.update({"queries": m, "reps": reps, "expand_actions": cnt["expand"] / (m * reps["expand"]), "hit5_worst": hit5,
                "torch": torch.__version__, "threads": a.threads, "sink": sink})
    if a.ns_hit5_worst is not None:
        out["hit5_worst_nextstate"] = a.ns_hit5_worst
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
