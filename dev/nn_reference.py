#!/usr/bin/python3
"""Reference tensors for the numerics core (src/learn/nn.c, loss.c, lstm.c, optim.c).

Writes tests/fixtures/nn/<case>/<tensor>.npy.  Inputs are float32 ('<f4',
exactly what the C tests feed their functions); layer and loss references
are computed by PyTorch in float64 from those same float32 values and
stored as '<f8', so a C test's difference is its own float32 error.  The
AdamW case runs torch.optim.AdamW in float32, as training does.  Upstream
gradients ("dout") are random, so backward is checked against
autograd of  sum(out * dout).

Run from the repository root with Debian's interpreter (python3-torch):
    /usr/bin/python3 dev/nn_reference.py
The C tests read only the committed .npy files; they need no Python.
"""
import math
import os
import shutil

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "nn")
TAU = 0.07


def save(case, name, a):
    d = os.path.join(ROOT, case)
    os.makedirs(d, exist_ok=True)
    a = a.detach().cpu().numpy() if torch.is_tensor(a) else np.asarray(a)
    if a.dtype == np.float32:
        a = a.astype("<f4")
    elif a.dtype == np.float64:
        a = a.astype("<f8")
    elif a.dtype == np.int64:
        a = a.astype("<i8")
    elif a.dtype == np.int32:
        a = a.astype("<i4")
    else:
        raise TypeError(a.dtype)
    np.save(os.path.join(d, name + ".npy"), np.ascontiguousarray(a))


def f32(g, *shape, scale=1.0, shift=0.0):
    """A float32 input (saved) and its float64 leaf tensor for autograd."""
    x = (torch.randn(*shape, generator=g, dtype=torch.float64) * scale + shift).float()
    return x


def leaf(x):
    return x.double().clone().requires_grad_(True)


def grads_of(out, dout, tensors):
    """Autograd of sum(out * dout) w.r.t. tensors."""
    return torch.autograd.grad((out * dout).sum(), tensors)


def case_linear(g):
    B, C, OC = 4, 7, 5
    x, w, b, dout = f32(g, B, C), f32(g, OC, C, scale=0.4), f32(g, OC), f32(g, B, OC)
    for n, t in [("x", x), ("w", w), ("b", b), ("dout", dout)]:
        save("linear", n, t)
    X, W, Bb = leaf(x), leaf(w), leaf(b)
    out = F.linear(X, W, Bb)
    dx, dw, db = grads_of(out, dout.double(), [X, W, Bb])
    for n, t in [("out", out), ("dx", dx), ("dw", dw), ("db", db)]:
        save("linear", n, t)


def case_sparse_linear(g):
    B, C, OC = 4, 9, 5
    # rows: 3 entries, none (empty row), 4 entries with a duplicate column, 2
    indptr = np.array([0, 3, 3, 7, 9], dtype=np.int64)
    indices = np.array([0, 4, 8, 1, 3, 3, 7, 2, 5], dtype=np.int32)
    values = f32(g, len(indices))
    w, b, dout = f32(g, OC, C, scale=0.4), f32(g, OC), f32(g, B, OC)
    dense = torch.zeros(B, C, dtype=torch.float64)
    for r in range(B):
        for k in range(indptr[r], indptr[r + 1]):
            dense[r, indices[k]] += float(values[k])
    for n, t in [("indptr", indptr), ("indices", indices), ("values", values), ("w", w), ("b", b),
                 ("dout", dout)]:
        save("sparse_linear", n, t)
    W, Bb = leaf(w), leaf(b)
    # the same matrix through torch.sparse (COO: duplicates add up), as a check
    rows = np.repeat(np.arange(B), np.diff(indptr))
    sp = torch.sparse_coo_tensor(torch.tensor(np.stack([rows, indices])), values.double(), size=(B, C))
    out_sparse = torch.sparse.mm(sp, W.t()) + Bb
    out = F.linear(dense, W, Bb)
    assert torch.allclose(out, out_sparse)
    dw, db = grads_of(out, dout.double(), [W, Bb])
    for n, t in [("out", out), ("dw", dw), ("db", db)]:
        save("sparse_linear", n, t)


def case_layernorm(g):
    N, C = 4, 8
    x = f32(g, N, C, scale=2.0, shift=0.7)
    w, b, dout = f32(g, C, scale=0.5, shift=1.0), f32(g, C), f32(g, N, C)
    for n, t in [("x", x), ("w", w), ("b", b), ("dout", dout)]:
        save("layernorm", n, t)
    X, W, Bb = leaf(x), leaf(w), leaf(b)
    out = F.layer_norm(X, (C,), W, Bb, eps=1e-5)
    dx, dw, db = grads_of(out, dout.double(), [X, W, Bb])
    for n, t in [("out", out), ("dx", dx), ("dw", dw), ("db", db)]:
        save("layernorm", n, t)
    # no affine part
    X = leaf(x)
    out = F.layer_norm(X, (C,), None, None, eps=1e-5)
    (dx,) = grads_of(out, dout.double(), [X])
    save("layernorm", "out_plain", out)
    save("layernorm", "dx_plain", dx)


def case_activations(g):
    x = torch.linspace(-5.0, 5.0, 41, dtype=torch.float64).float()
    x = (x + 0.013).float()  # no exact zero (the ReLU kink)
    dout = f32(g, 41)
    save("act", "x", x)
    save("act", "dout", dout)
    X = leaf(x)
    out = F.gelu(X)  # approximate='none': the erf form
    (dx,) = grads_of(out, dout.double(), [X])
    save("act", "gelu_out", out)
    save("act", "gelu_dx", dx)
    X = leaf(x)
    out = F.relu(X)
    (dx,) = grads_of(out, dout.double(), [X])
    save("act", "relu_out", out)
    save("act", "relu_dx", dx)


def case_resmlp(g):
    B, DS, DA, H, DO = 3, 6, 5, 7, 4
    t = {
        "hs": f32(g, B, DS), "ha": f32(g, B, DA),
        "w1": f32(g, H, DS + DA, scale=0.3), "b1": f32(g, H, scale=0.1),
        "w2": f32(g, DO, H, scale=0.3), "b2": f32(g, DO, scale=0.1),
        "w_res": f32(g, DO, DS, scale=0.3),
        "ln_w": f32(g, DO, scale=0.2, shift=1.0), "ln_b": f32(g, DO, scale=0.1),
        "dout": f32(g, B, DO),
    }
    for n, v in t.items():
        save("resmlp", n, v)
    L = {n: leaf(v) for n, v in t.items() if n != "dout"}
    x = torch.cat([L["hs"], L["ha"]], dim=1)
    z = F.linear(F.gelu(F.linear(x, L["w1"], L["b1"])), L["w2"], L["b2"]) + F.linear(L["hs"], L["w_res"])
    out = F.layer_norm(z, (DO,), L["ln_w"], L["ln_b"], eps=1e-5)
    save("resmlp", "out", out)
    names = list(L)
    gr = grads_of(out, t["dout"].double(), [L[n] for n in names])
    for n, v in zip(names, gr):
        save("resmlp", "d" + n, v)


def case_film(g):
    B, D = 3, 6
    t = {
        "h": f32(g, B, D, scale=1.5, shift=0.3), "A": f32(g, B, D, scale=0.5), "b": f32(g, B, D, scale=0.5),
        "ln_w": f32(g, D, scale=0.2, shift=1.0), "ln_b": f32(g, D, scale=0.1), "dout": f32(g, B, D),
    }
    for n, v in t.items():
        save("film", n, v)
    L = {n: leaf(v) for n, v in t.items() if n != "dout"}
    out = F.gelu(F.layer_norm(L["h"], (D,), L["ln_w"], L["ln_b"], eps=1e-5) * (1 + L["A"]) + L["b"])
    save("film", "out", out)
    names = list(L)
    gr = grads_of(out, t["dout"].double(), [L[n] for n in names])
    for n, v in zip(names, gr):
        save("film", "d" + n, v)


def case_infonce(g):
    B, D = 6, 5
    pred, target = f32(g, B, D), f32(g, B, D)
    # make row 2 close to its target so that the loss is not uniform
    target[2] = (pred[2] * 0.9 + target[2] * 0.1).float()
    save("infonce", "pred", pred)
    save("infonce", "target", target)
    P, T = leaf(pred), leaf(target)
    logits = F.normalize(P, dim=-1) @ F.normalize(T, dim=-1).t() / TAU
    loss = F.cross_entropy(logits, torch.arange(B))
    dp, dt = torch.autograd.grad(loss, [P, T])
    save("infonce", "loss", loss.reshape(1))
    save("infonce", "dpred", dp)
    save("infonce", "dtarget", dt)


def action_loss(P, T, count, truth):
    """Paper eq. 28 with per-row candidate counts."""
    rows = []
    for i in range(P.shape[0]):
        c = int(count[i])
        z = F.cosine_similarity(P[i, :c], T[i].unsqueeze(0).expand(c, -1), dim=-1, eps=0.0) / TAU
        # cosine_similarity == dot of F.normalize'd vectors for non-degenerate rows
        z2 = (F.normalize(P[i, :c], dim=-1) @ F.normalize(T[i], dim=-1)) / TAU
        assert torch.allclose(z, z2)
        rows.append(F.cross_entropy(z2.unsqueeze(0), torch.tensor([int(truth[i])])))
    return torch.stack(rows).mean()


def case_action(g):
    N, K, D = 4, 5, 6
    pred, target = f32(g, N, K, D), f32(g, N, D)
    count = np.array([5, 3, 1, 4], dtype=np.int32)
    truth = np.array([2, 0, 0, 3], dtype=np.int32)
    for i in range(N):  # padding holds garbage the loss must ignore
        pred[i, count[i]:] = 1e30
    for n, v in [("pred", pred), ("target", target), ("count", count), ("truth", truth)]:
        save("action", n, v)
    P, T = leaf(pred), leaf(target)
    loss = action_loss(P, T, count, truth)
    dp, dt = torch.autograd.grad(loss, [P, T])
    save("action", "loss", loss.reshape(1))
    save("action", "dpred", dp)
    save("action", "dtarget", dt)
    # grid variant: N states × N actions, label on the diagonal
    N = 3
    pred, target = f32(g, N, N, D), f32(g, N, D)
    save("action_grid", "pred", pred)
    save("action_grid", "target", target)
    P, T = leaf(pred), leaf(target)
    loss = action_loss(P, T, [N] * N, list(range(N)))
    dp, dt = torch.autograd.grad(loss, [P, T])
    save("action_grid", "loss", loss.reshape(1))
    save("action_grid", "dpred", dp)
    save("action_grid", "dtarget", dt)


def case_cosine_mse(g):
    N, D = 5, 4
    pred, target = f32(g, N, D), f32(g, N, D)
    mask = np.array([1, 0, 1, 1, 1], dtype=np.int32)
    for n, v in [("pred", pred), ("target", target), ("mask", mask)]:
        save("cosine_mse", n, v)
    sel = torch.tensor(mask == 1)
    for tag, m in [("", None), ("_masked", sel)]:
        P, T = leaf(pred), leaf(target)
        Pm, Tm = (P, T) if m is None else (P[m], T[m])
        loss = (1 - F.cosine_similarity(Pm, Tm, dim=-1)).mean()
        dp, dt = torch.autograd.grad(loss, [P, T])
        save("cosine_mse", "cos_loss" + tag, loss.reshape(1))
        save("cosine_mse", "cos_dpred" + tag, dp)
        save("cosine_mse", "cos_dtarget" + tag, dt)
        P, T = leaf(pred), leaf(target)
        Pm, Tm = (P, T) if m is None else (P[m], T[m])
        loss = F.mse_loss(Pm, Tm)
        dp, dt = torch.autograd.grad(loss, [P, T])
        save("cosine_mse", "mse_loss" + tag, loss.reshape(1))
        save("cosine_mse", "mse_dpred" + tag, dp)
        save("cosine_mse", "mse_dtarget" + tag, dt)


def case_lstm(g, name, L, I, H, T, B, with_state, bias):
    torch.manual_seed(1234 + L)
    ref = torch.nn.LSTM(I, H, num_layers=L, bias=bias)  # float32 init, torch's own
    params = {k: v.detach().clone() for k, v in ref.state_dict().items()}
    x, dy = f32(g, T, B, I), f32(g, T, B, H)
    save(name, "x", x)
    save(name, "dy", dy)
    for k, v in params.items():
        save(name, k, v)
    lstm = torch.nn.LSTM(I, H, num_layers=L, bias=bias).double()
    lstm.load_state_dict({k: v.double() for k, v in params.items()})
    X = leaf(x)
    ins = [X]
    if with_state:
        h0, c0 = f32(g, L, B, H, scale=0.5), f32(g, L, B, H, scale=0.5)
        dhn, dcn = f32(g, L, B, H), f32(g, L, B, H)
        for n, v in [("h0", h0), ("c0", c0), ("dhn", dhn), ("dcn", dcn)]:
            save(name, n, v)
        H0, C0 = leaf(h0), leaf(c0)
        y, (hn, cn) = lstm(X, (H0, C0))
        obj = (y * dy.double()).sum() + (hn * dhn.double()).sum() + (cn * dcn.double()).sum()
        ins += [H0, C0]
    else:
        y, (hn, cn) = lstm(X)
        obj = (y * dy.double()).sum()
    names = [k for k, _ in lstm.named_parameters()]
    gr = torch.autograd.grad(obj, ins + [p for _, p in lstm.named_parameters()])
    save(name, "y", y)
    save(name, "hn", hn)
    save(name, "cn", cn)
    save(name, "dx", gr[0])
    if with_state:
        save(name, "dh0", gr[1])
        save(name, "dc0", gr[2])
    for k, v in zip(names, gr[len(ins):]):
        save(name, "d" + k, v)


def case_adamw(g):
    n, steps = 10, 6
    p0 = f32(g, n)
    grads = f32(g, steps, n)
    grads[3, 4] = 0.0  # a zero gradient
    p = p0.clone().requires_grad_(True)
    lr, wd, warm = 0.01, 0.05, 4
    opt = torch.optim.AdamW([p], lr=lr, weight_decay=wd)  # betas 0.9/0.999, eps 1e-8
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, end_factor=1.0, total_iters=warm)
    traj, lrs = [], []
    for s in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        p.grad = grads[s].clone()
        opt.step()
        sched.step()
        traj.append(p.detach().clone())
    st = opt.state[p]
    save("adamw", "p0", p0)
    save("adamw", "grads", grads)
    save("adamw", "traj", torch.stack(traj))
    save("adamw", "m", st["exp_avg"])
    save("adamw", "v", st["exp_avg_sq"])
    save("adamw", "lrs", np.array(lrs, dtype=np.float64))
    # the warm-up factor over 15 scheduler steps with total_iters 10 (the paper's)
    q = torch.zeros(1, requires_grad=True)
    opt = torch.optim.AdamW([q], lr=1.0)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, end_factor=1.0, total_iters=10)
    fac = []
    for _ in range(15):
        fac.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    save("adamw", "warmup10", np.array(fac, dtype=np.float64))


def main():
    torch.set_num_threads(1)
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    g = torch.Generator().manual_seed(20240607)
    case_linear(g)
    case_sparse_linear(g)
    case_layernorm(g)
    case_activations(g)
    case_resmlp(g)
    case_film(g)
    case_infonce(g)
    case_action(g)
    case_cosine_mse(g)
    case_lstm(g, "lstm", L=2, I=5, H=4, T=3, B=2, with_state=True, bias=True)
    case_lstm(g, "lstm1", L=1, I=3, H=5, T=4, B=3, with_state=False, bias=False)
    case_adamw(g)
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(ROOT) for f in fs)
    count = sum(len(fs) for _, _, fs in os.walk(ROOT))
    print(f"wrote {count} files, {total} bytes, under {os.path.relpath(ROOT)}")


if __name__ == "__main__":
    main()
