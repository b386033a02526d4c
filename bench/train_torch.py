#!/usr/bin/python3
"""The EmbedPlan head of src/learn/world.c in PyTorch (CPU), trained on the same data
as `nextstate train` for bench/train_torch.sh.

Same model, loss, optimiser and schedule as world.c's defaults (world.h):
  heads   π(x) = Linear(H→128)(GELU(LN(SparseLinear(D→H)(x))))     (L = 2,
          H = 512 for sparse input); the sparse first layer is an
          nn.EmbeddingBag(mode="sum", per_sample_weights = feature values),
          the standard fast CPU path for CSR input (same function as
          x·Wᵀ + b with W[H×D]; torch.nn.Linear's default init bounds)
  T       resmlp: LN(W2·GELU(W1·[h_s; h_a] + b1) + b2 + W_res·h_s), 128 hidden
  loss    InfoNCE over the batch's targets π_s(E(s′)) (τ = 0.07)
          + 2 × action loss: the true action and up to K = 50 other actions
          applicable in s (uniform sample when more) compete for s′
  optim   AdamW (lr, wd 0.01, betas 0.9/0.999) over every parameter, lr ×
          (0.1 + 0.9·epoch/10) for the first 10 epochs; batch 128; shuffled
  select  the epoch with the best dev Hit@5 (ties: dev MRR) on the dev pools
          nextstate's training loop draws (exported by train_export.c)

Inputs: the split directory (train/dev/test lists, test pools), its dataset
(transitions, applicable actions) and the exported features directory.
Prints one JSON object: samples/s over the training steps only (as
nextstate's samples_per_s), wall seconds, best epoch, dev/test Hit@k.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def load_csr(prefix):
    ip = np.load(prefix + "_indptr.npy")
    ix = np.load(prefix + "_indices.npy")
    v = np.load(prefix + "_values.npy")
    shape = np.load(prefix + "_shape.npy")
    n, d = int(shape[0]), int(shape[1])
    # padded [n, maxnnz] index / weight matrices: one bag per row, padding
    # entries point at column 0 with weight 0 (no contribution, no gradient)
    lens = np.diff(ip)
    m = max(1, int(lens.max()) if n else 1)
    idx = np.zeros((n, m), dtype=np.int64)
    w = np.zeros((n, m), dtype=np.float32)
    for r in range(n):
        a, b = ip[r], ip[r + 1]
        idx[r, : b - a] = ix[a:b]
        w[r, : b - a] = v[a:b]
    return torch.from_numpy(idx), torch.from_numpy(w), d


def uniform_(t, fan_in):
    bound = 1.0 / np.sqrt(fan_in) if fan_in > 0 else 0
    with torch.no_grad():
        t.uniform_(-bound, bound)


class SparseLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.bag = nn.EmbeddingBag(d_in, d_out, mode="sum")
        self.bias = nn.Parameter(torch.empty(d_out))
        uniform_(self.bag.weight, d_in)
        uniform_(self.bias, d_in)

    def forward(self, idx, w):
        return self.bag(idx, per_sample_weights=w) + self.bias


class Head(nn.Module):
    def __init__(self, d_in, hidden, out):
        super().__init__()
        self.lin0 = SparseLinear(d_in, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, out)

    def forward(self, idx, w):
        return self.out(F.gelu(self.ln(self.lin0(idx, w))))


class ResMLP(nn.Module):
    def __init__(self, o=128, h=128):
        super().__init__()
        self.w1 = nn.Linear(2 * o, h)
        self.w2 = nn.Linear(h, o)
        self.w_res = nn.Linear(o, o, bias=False)
        self.ln = nn.LayerNorm(o)

    def forward(self, hs, ha):
        return self.ln(self.w2(F.gelu(self.w1(torch.cat([hs, ha], dim=1)))) + self.w_res(hs))


class World(nn.Module):
    def __init__(self, ds, da, hidden=512, out=128, t_hidden=128):
        super().__init__()
        self.ps = Head(ds, hidden, out)
        self.pa = Head(da, hidden, out)
        self.t = ResMLP(out, t_hidden)


def hits(scores_truth, scores_other, valid, gen):
    """Random tie-breaking ranks (as evaluate.h): rank = #greater + U{0..#equal}."""
    gt = ((scores_other > scores_truth[:, None]) & valid).sum(1)
    eq = ((scores_other == scores_truth[:, None]) & valid).sum(1)
    u = torch.floor(torch.rand(len(eq), generator=gen, dtype=torch.float64) * (eq.double() + 1)).long()
    rank = gt + u
    worst = gt + eq + 1
    out = {f"hit@{k}": float((rank < k).double().mean()) for k in (1, 5, 10)}
    out.update({f"hit@{k}_worst": float((worst <= k).double().mean()) for k in (1, 5, 10)})
    out["mrr"] = float((1.0 / (rank.double() + 1)).mean())
    out["n"] = int(len(rank))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("split")
    ap.add_argument("features")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--warmup-start", type=float, default=0.1)
    ap.add_argument("--tau", type=float, default=0.07)
    ap.add_argument("--action-weight", type=float, default=2.0)
    ap.add_argument("--action-k", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed)
    t_start = time.perf_counter()

    sp = json.load(open(os.path.join(a.split, "split.json")))
    ds_dir = sp["datasets"][0]["dir"]
    T = torch.from_numpy(np.load(os.path.join(ds_dir, "transitions.npy")).astype(np.int64))
    app_off = np.load(os.path.join(ds_dir, "applicable_offsets.npy"))
    app_ops = np.load(os.path.join(ds_dir, "applicable_ops.npy")).astype(np.int64)
    train = torch.from_numpy(np.load(os.path.join(a.split, "train.npy"))[:, 1])
    dev = torch.from_numpy(np.load(os.path.join(a.split, "dev.npy"))[:, 1])
    test = torch.from_numpy(np.load(os.path.join(a.split, "test.npy"))[:, 1])
    test_pools = torch.from_numpy(np.load(os.path.join(a.split, "pools.npy")))
    dev_pools = torch.from_numpy(np.load(os.path.join(a.features, "dev_pools.npy")))
    aoff = torch.from_numpy(np.load(os.path.join(a.features, "action_offsets.npy")))
    s_idx, s_w, s_dim = load_csr(os.path.join(a.features, "states"))
    a_idx, a_w, a_dim = load_csr(os.path.join(a.features, "actions"))

    # per training transition: state rows, action row, other applicable action rows (padded)
    def rows(tl):
        tr = T[tl]
        return tr[:, 1], tr[:, 3], aoff[tr[:, 0]] + tr[:, 2], tr

    tr_s, tr_s2, tr_a, tr_T = rows(train)
    others = []
    for k in range(len(train)):
        p, s, op = int(tr_T[k, 0]), int(tr_T[k, 1]), int(tr_T[k, 2])
        ops = app_ops[app_off[s]:app_off[s + 1]]
        others.append(int(aoff[p]) + ops[ops != op])
    maxo = max(1, max(len(o) for o in others))
    oth = torch.full((len(train), maxo), -1, dtype=torch.long)
    for k, o in enumerate(others):
        oth[k, : len(o)] = torch.from_numpy(o)
    n_oth = (oth >= 0).sum(1)
    K = a.action_k

    model = World(s_dim, a_dim)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay, betas=(0.9, 0.999))
    tau = a.tau

    def batch_loss(b):
        n = len(b)
        s, s2, act = tr_s[b], tr_s2[b], tr_a[b]
        # other actions: all when ≤ K, else a uniform K-subset (random keys, top-K)
        o = oth[b]
        valid = o >= 0
        if o.shape[1] > K:
            keys = torch.rand(o.shape, generator=gen).masked_fill(~valid, 2.0)
            pick = keys.topk(K, dim=1, largest=False).indices
            o = o.gather(1, pick)
            valid = o >= 0
        has = valid.any(1)
        cand_s = torch.arange(n).unsqueeze(1).expand_as(o)[valid]   # pair → batch row
        cand_a = o[valid]
        pair_a = torch.cat([act, cand_a])
        uniq, inv = torch.unique(pair_a, return_inverse=True)
        srows = torch.cat([s, s2])
        HS = model.ps(s_idx[srows], s_w[srows])
        HA = model.pa(a_idx[uniq], a_w[uniq])
        hs_p = torch.cat([HS[:n], HS[cand_s]])
        pred = model.t(hs_p, HA[inv])
        tgt = F.normalize(HS[n:], dim=1)
        pn = F.normalize(pred, dim=1)
        loss = F.cross_entropy(pn[:n] @ tgt.t() / tau, torch.arange(n))
        if a.action_weight > 0 and bool(has.any()):
            # candidate slots per batch row: slot 0 the true action, then its others
            width = 1 + o.shape[1]
            slot = torch.full((n, width), -1, dtype=torch.long)
            slot[:, 0] = torch.arange(n)
            pos = valid.long().cumsum(1)  # slot of each valid other (1, 2, …)
            flat = torch.arange(len(cand_s)) + n
            slot[cand_s, pos[valid]] = flat
            slot = slot[has]
            m = slot >= 0
            z = (pn[slot.clamp(min=0)] * tgt[has].unsqueeze(1)).sum(-1) / tau
            z = z.masked_fill(~m, float("-inf"))
            loss = loss + a.action_weight * F.cross_entropy(z, torch.zeros(len(z), dtype=torch.long))
        return loss

    @torch.no_grad()
    def evaluate(tl, pools):
        model.eval()
        s, s2, act, _ = rows(tl)
        hs = model.ps(s_idx[s], s_w[s])
        ha = model.pa(a_idx[act], a_w[act])
        pred = F.normalize(model.t(hs, ha), dim=1)
        valid = pools >= 0
        cand = pools.clamp(min=0)
        uc, inv = torch.unique(cand, return_inverse=True)
        hc = F.normalize(model.ps(s_idx[uc], s_w[uc]), dim=1)
        sc = (pred.unsqueeze(1) * hc[inv]).sum(-1)
        model.train()
        return hits(sc[:, 0], sc[:, 1:], valid[:, 1:], torch.Generator().manual_seed(a.seed))

    ntr = len(train)
    train_time = 0.0
    samples = 0
    best = (-1.0, -1.0)
    best_epoch = 0
    best_state = None
    last_loss = 0.0
    t_loop = time.perf_counter()
    for ep in range(a.epochs):
        te = time.perf_counter()
        f = 1.0 if ep >= a.warmup else a.warmup_start + (1 - a.warmup_start) * ep / a.warmup
        for g in opt.param_groups:
            g["lr"] = a.lr * f
        order = torch.randperm(ntr, generator=gen)
        tot, nb = 0.0, 0
        for b0 in range(0, ntr, a.batch):
            b = order[b0:b0 + a.batch]
            opt.zero_grad(set_to_none=True)
            loss = batch_loss(b)
            loss.backward()
            opt.step()
            tot += float(loss)
            nb += 1
            samples += len(b)
        train_time += time.perf_counter() - te
        last_loss = tot / max(nb, 1)
        if len(dev):
            h = evaluate(dev, dev_pools)
            key = (h["hit@5"], h["mrr"])
            if key > best:
                best, best_epoch = key, ep + 1
                best_state = {k: v.clone() for k, v in model.state_dict().items()}
    loop_s = time.perf_counter() - t_loop
    if best_state is not None:
        model.load_state_dict(best_state)
    res = {
        "impl": "torch", "torch": torch.__version__, "threads": a.threads, "epochs": a.epochs, "lr": a.lr,
        "batch": a.batch, "train": int(ntr), "n_dev": int(len(dev)), "n_test": int(len(test)),
        "params": int(sum(p.numel() for p in model.parameters())),
        "samples": samples, "train_seconds": train_time, "samples_per_s": samples / train_time if train_time else 0,
        "loop_seconds": loop_s, "best_epoch": best_epoch, "best_dev_hit@5": best[0], "last_loss": last_loss,
        "dev_metrics": evaluate(dev, dev_pools) if len(dev) else None, "test_metrics": evaluate(test, test_pools),
    }
    res["wall_seconds"] = time.perf_counter() - t_start
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
