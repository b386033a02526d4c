#!/usr/bin/python3
"""The first paper's LSTM next-state model (src/learn/predictor.c) in PyTorch (CPU),
trained on the same WL inputs as `nextstate learn --model lstm`, for
bench/lstm_torch.sh.

Inputs: folders written by `nextstate encode --plans DOMAIN PROBLEMS PLANS
--encoder wl` — per problem <name>.npy [T+1, D] (φ(s_0) … φ(s_T)) and
<name>_goal.npy [D] — for the training split (vocabulary fitted there, as
`nextstate learn` fits it: training states only, 2 iterations, statics in)
and optionally the validation split (encoded with that vocabulary).

Same model, loss, optimiser and loop as predictor.c:
  model   nn.LSTM(2D, 256, 2) over a whole trajectory, time-major; inputs
          x_t = [φ(s_t), φ(g)] for t = 0 … T−1
  state   head Linear(H→H) → LayerNorm(H) → ReLU → Linear(H→D), target
          φ(s_{t+1}), loss 1 − cos (norms clamped at 1e-12), mean over rows
  delta   head Linear(H→D), target φ(s_{t+1}) − φ(s_t), MSE (mean over rows×D)
  optim   Adam lr 1e-2 (betas 0.9/0.999, eps 1e-8, no weight decay)
  batch   32 trajectories per step, shuffled every epoch, zero-padded to the
          longest, padded steps masked out of the loss
  select  validation loss (mean over every validation transition, batches
          of 32 in order) after every epoch; the best epoch's parameters kept

Timing as nextstate's `seconds`: the whole epoch loop (training steps and
the per-epoch validation pass).  --check-model MODEL loads a nextstate
LSTM model file (params checkpoint, params.h) into this module and prints
its validation loss computed by PyTorch — equal to nextstate's best_val
when both sides see the same inputs, architecture and loss.
Prints one JSON object.
"""
import argparse
import copy
import json
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn


def load_split(folder):
    """Trajectories of an encoded folder, sorted by problem name."""
    names = sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".npy") and not f.endswith("_goal.npy"))
    seqs = []
    for n in names:
        phi = np.load(os.path.join(folder, n + ".npy")).astype(np.float32)
        goal = np.load(os.path.join(folder, n + "_goal.npy")).astype(np.float32).reshape(-1)
        seqs.append((n, phi, goal))
    return seqs


def tensors(seqs, mode):
    """Per trajectory: x [T, 2D], y [T, D] (T = plan length)."""
    out = []
    for _, phi, goal in seqs:
        T = phi.shape[0] - 1
        if T < 1:
            continue
        x = np.concatenate([phi[:-1], np.broadcast_to(goal, (T, goal.shape[0]))], axis=1)
        y = phi[1:] if mode == "state" else phi[1:] - phi[:-1]
        out.append((torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(np.ascontiguousarray(y))))
    return out


class Predictor(nn.Module):
    def __init__(self, D, hidden, layers, mode):
        super().__init__()
        self.mode = mode
        self.lstm = nn.LSTM(2 * D, hidden, layers)
        if mode == "state":
            self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.ReLU(), nn.Linear(hidden, D))
        else:
            self.head = nn.Linear(hidden, D)

    def forward(self, x):
        return self.head(self.lstm(x)[0])


def batch(data, ids):
    T = max(data[i][0].shape[0] for i in ids)
    B = len(ids)
    x = torch.zeros(T, B, data[ids[0]][0].shape[1])
    y = torch.zeros(T, B, data[ids[0]][1].shape[1])
    mask = torch.zeros(T, B, dtype=torch.bool)
    for k, i in enumerate(ids):
        t = data[i][0].shape[0]
        x[:t, k] = data[i][0]
        y[:t, k] = data[i][1]
        mask[:t, k] = True
    return x, y, mask


def loss_fn(pred, y, mask, mode):
    p, t = pred[mask], y[mask]
    if mode == "state":
        cos = (p * t).sum(-1) / (p.norm(dim=-1).clamp_min(1e-12) * t.norm(dim=-1).clamp_min(1e-12))
        return (1.0 - cos).mean()
    return ((p - t) ** 2).mean()


@torch.no_grad()
def mean_loss(model, data, bs, mode):
    s, rows = 0.0, 0
    for i in range(0, len(data), bs):
        ids = list(range(i, min(i + bs, len(data))))
        x, y, mask = batch(data, ids)
        r = int(mask.sum())
        if r:
            s += float(loss_fn(model(x), y, mask, mode)) * r
            rows += r
    return s / rows if rows else 0.0


def load_nextstate(model, path):
    """Copies the tensors of a nextstate params checkpoint (params.h) into model."""
    b = open(path, "rb").read()
    if b[:8] != b"NSPARAMS":
        raise SystemExit(f"{path}: not a nextstate checkpoint")
    _ver, _flags, n, mlen = struct.unpack_from("<4I", b, 8)
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
    sd = model.state_dict()
    for name, shape in table:
        cnt = int(np.prod(shape))
        arr = np.frombuffer(b, dtype="<f4", count=cnt, offset=pos).reshape(shape)
        pos += 4 * cnt
        sd[name].copy_(torch.from_numpy(arr.copy()))
    if set(sd) != {nm for nm, _ in table}:
        raise SystemExit(f"{path}: tensors {sorted(nm for nm, _ in table)} != {sorted(sd)}")
    return json.loads(b[40:40 + mlen].decode())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("--val")
    ap.add_argument("--mode", choices=("state", "delta"), default="state")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=500)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--check-model", help="a nextstate model file: its validation loss under PyTorch")
    a = ap.parse_args()
    t_start = time.perf_counter()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed)

    tr_seqs = load_split(a.train)
    D = tr_seqs[0][1].shape[1]
    tr = tensors(tr_seqs, a.mode)
    va = tensors(load_split(a.val), a.mode) if a.val else []
    rows = sum(x.shape[0] for x, _ in tr)
    val_rows = sum(x.shape[0] for x, _ in va)
    sel = va if val_rows else tr

    model = Predictor(D, a.hidden, a.layers, a.mode)
    res = {"impl": "torch", "torch": torch.__version__, "threads": a.threads, "mode": a.mode, "dim": D,
           "train_problems": len(tr_seqs), "train_rows": rows, "val_rows": val_rows, "epochs": a.epochs,
           "size": int(sum(p.numel() for p in model.parameters()))}
    if a.check_model:
        meta = load_nextstate(model, a.check_model)
        model.eval()
        res["check_model"] = {"nextstate_best_val": meta["train"]["best_val"],
                              "torch_val_of_nextstate_model": mean_loss(model, sel, a.batch, a.mode)}
        json.dump(res, sys.stdout)
        print()
        return

    opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8)
    best, best_epoch, best_state, last_val = float("inf"), 0, None, float("nan")
    step_s = 0.0
    t_loop = time.perf_counter()
    for ep in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        model.train()
        order = torch.randperm(len(tr), generator=gen).tolist()
        for i in range(0, len(tr), a.batch):
            x, y, mask = batch(tr, order[i:i + a.batch])
            if not mask.any():
                continue
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y, mask, a.mode)
            loss.backward()
            opt.step()
        step_s += time.perf_counter() - t0
        model.eval()
        last_val = mean_loss(model, sel, a.batch, a.mode)
        if np.isfinite(last_val) and last_val < best:
            best, best_epoch = last_val, ep
            best_state = copy.deepcopy(model.state_dict())
    loop_s = time.perf_counter() - t_loop
    if best_state is not None:
        model.load_state_dict(best_state)
    res.update({"seconds": loop_s, "step_seconds": step_s, "transitions_per_s": rows * a.epochs / loop_s,
                "best_epoch": best_epoch, "best_val": best if val_rows else None, "last_val": last_val,
                "selected_on": "val" if val_rows else "train"})
    res["wall_seconds"] = time.perf_counter() - t_start
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
