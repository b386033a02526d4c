#!/usr/bin/python3
"""Reference gradients of LoRA adapters through a BERT / MPNet sentence
encoder, for src/learn/lora.c (tests/unit/test_lora.c).

For the tiny random-weight encoders of tests/fixtures/bert (dev/bert_fixture.py)
this script rebuilds the forward pass in PyTorch from the model's
safetensors file and config — written from the BERT / MPNet definitions
(transformers' BertModel / MPNetModel) plus sentence-transformers' mean
pooling and normalisation, not from the C code — and checks it against
the sentence-transformers embeddings stored in tests/fixtures/bert/*.ref.json
(the adapter off).  It then adds LoRA adapters (PEFT's LoraLayer without
dropout: y = x·Wᵀ + b + alpha/r · (x·Aᵀ)·Bᵀ) to the query, key, value and
output dense projections of every layer, with A and B random (B ≠ 0, so
every path carries gradient), and writes, per model, into
tests/fixtures/lora/<model>/:

  ids.npy     <i4 [Σ lens]   token ids of the texts, one after the other
  lens.npy    <i4 [n]
  params.npy  <f4 [P]        A, B of every (layer, target) in the C table
                             order: layer by layer, targets q, k, v, o, A then B
  dout.npy    <f4 [n, H]     upstream gradient of the sentence embeddings
  out.npy     <f8 [n, H]     adapted sentence embeddings
  frozen.npy  <f8 [n, H]     the same without the adapter
  grad.npy    <f8 [P]        d sum(out · dout) / d params, same order

The forward and the gradients are computed in float64 from the float32
weights and parameters, so the C test's difference is its own float32 error.
Run from the repository root with Debian's interpreter (python3-torch):
    /usr/bin/python3 dev/lora_reference.py
"""
import json
import os
import struct

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures')
RANK, ALPHA = 3, 6.0
TARGETS = ('query', 'key', 'value', 'output')


def safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        head = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in head.items():
        if name == '__metadata__':
            continue
        assert t['dtype'] == 'F32', name
        a, b = t['data_offsets']
        out[name] = torch.from_numpy(np.frombuffer(data[a:b], dtype='<f4').reshape(t['shape']).copy()).double()
    return out


def names(arch, l):
    if arch == 'mpnet':
        p = 'encoder.layer.%d.' % l
        return {'query': p + 'attention.attn.q', 'key': p + 'attention.attn.k', 'value': p + 'attention.attn.v',
                'output': p + 'attention.attn.o', 'ln1': p + 'attention.LayerNorm',
                'w1': p + 'intermediate.dense', 'w2': p + 'output.dense', 'ln2': p + 'output.LayerNorm'}
    p = 'encoder.layer.%d.' % l
    return {'query': p + 'attention.self.query', 'key': p + 'attention.self.key', 'value': p + 'attention.self.value',
            'output': p + 'attention.output.dense', 'ln1': p + 'attention.output.LayerNorm',
            'w1': p + 'intermediate.dense', 'w2': p + 'output.dense', 'ln2': p + 'output.LayerNorm'}


def ln(x, W, name, eps):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], W[name + '.weight'], W[name + '.bias'], eps)


def encode(W, cfg, ids, buckets, lora):
    """Sentence embedding of one sequence (a list of ids); lora maps
    (layer, target) to (A, B) or is empty."""
    arch, H, nh = cfg['model_type'], cfg['hidden_size'], cfg['num_attention_heads']
    eps, dh, L = cfg['layer_norm_eps'], cfg['hidden_size'] // cfg['num_attention_heads'], len(ids)
    pre = '' if 'embeddings.word_embeddings.weight' in W else arch + '.'
    W = {k[len(pre):] if k.startswith(pre) else k: v for k, v in W.items()}
    ids_t = torch.tensor(ids)
    if arch == 'mpnet':
        pad = cfg['pad_token_id']
        pos = pad + 1 + torch.arange(L)  # no padding inside a sequence
        x = W['embeddings.word_embeddings.weight'][ids_t] + W['embeddings.position_embeddings.weight'][pos]
    else:
        x = (W['embeddings.word_embeddings.weight'][ids_t] + W['embeddings.position_embeddings.weight'][:L] +
             W['embeddings.token_type_embeddings.weight'][0])
    x = ln(x, W, 'embeddings.LayerNorm', eps)
    bias = None
    if arch == 'mpnet':  # relative position bias: bucket(key − query) per head
        rel = torch.arange(L)[None, :] - torch.arange(L)[:, None]
        bk = torch.tensor([[buckets[r] for r in row] for row in rel.tolist()])
        bias = W['encoder.relative_attention_bias.weight'][bk].permute(2, 0, 1)  # [heads, L, L]
    scale = ALPHA / RANK

    def proj(l, t, name, inp):
        y = inp @ W[name + '.weight'].T + W[name + '.bias']
        if (l, t) in lora:
            A, B = lora[(l, t)]
            y = y + scale * (inp @ A.T) @ B.T
        return y

    for l in range(cfg['num_hidden_layers']):
        n = names(arch, l)
        q, k, v = (proj(l, t, n[t], x).view(L, nh, dh).transpose(0, 1) for t in ('query', 'key', 'value'))
        s = q @ k.transpose(1, 2) / dh ** 0.5
        if bias is not None:
            s = s + bias
        ctx = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(L, H)
        x = ln(x + proj(l, 'output', n['output'], ctx), W, n['ln1'], eps)
        u = torch.nn.functional.gelu(x @ W[n['w1'] + '.weight'].T + W[n['w1'] + '.bias'])
        x = ln(x + u @ W[n['w2'] + '.weight'].T + W[n['w2'] + '.bias'], W, n['ln2'], eps)
    p = x.mean(0)
    return p / p.norm().clamp_min(1e-12)


def save(d, name, a, dtype):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, name + '.npy'), np.asarray(a).astype(dtype))


def case(model, picks, seed):
    src = os.path.join(ROOT, 'bert', model)
    cfg = json.load(open(os.path.join(src, 'config.json')))
    ref = json.load(open(os.path.join(ROOT, 'bert', model + '.ref.json')))
    W = safetensors(os.path.join(src, 'model.safetensors'))
    buckets = {ref['buckets_from'] + i: b for i, b in enumerate(ref['buckets'])}
    texts = [ref['cases'][i] for i in picks]
    # the frozen forward against sentence-transformers
    worst = 0.0
    for c in texts:
        e = encode(W, cfg, c['ids'], buckets, {})
        worst = max(worst, (e - torch.tensor(c['embedding'], dtype=torch.float64)).abs().max().item())
    assert worst < 2e-6, (model, worst)
    H = cfg['hidden_size']
    g = torch.Generator().manual_seed(seed)
    flat, lora = [], {}
    for l in range(cfg['num_hidden_layers']):
        for t in TARGETS:
            A = ((torch.rand(RANK, H, generator=g) * 2 - 1) / H ** 0.5).float()
            B = (0.5 * torch.randn(H, RANK, generator=g)).float()
            A64, B64 = A.double().requires_grad_(), B.double().requires_grad_()
            lora[(l, t)] = (A64, B64)
            flat += [A64, B64]
    dout = torch.randn(len(texts), H, generator=g).float()
    out = torch.stack([encode(W, cfg, c['ids'], buckets, lora) for c in texts])
    frozen = torch.stack([encode(W, cfg, c['ids'], buckets, {}) for c in texts]).detach()
    (out * dout.double()).sum().backward()
    d = os.path.join(ROOT, 'lora', model)
    save(d, 'ids', np.concatenate([c['ids'] for c in texts]), '<i4')
    save(d, 'lens', [len(c['ids']) for c in texts], '<i4')
    save(d, 'params', torch.cat([p.detach().reshape(-1) for p in flat]).numpy(), '<f4')
    save(d, 'dout', dout.numpy(), '<f4')
    save(d, 'out', out.detach().numpy(), '<f8')
    save(d, 'frozen', frozen.numpy(), '<f8')
    save(d, 'grad', torch.cat([p.grad.reshape(-1) for p in flat]).numpy(), '<f8')
    print('%s: %d texts, frozen forward vs sentence-transformers max|diff| %.2e, %d adapter parameters, '
          'max|grad| %.3g' % (model, len(texts), worst, sum(p.numel() for p in flat),
                              max(p.grad.abs().max().item() for p in flat)))


def main():
    torch.set_num_threads(1)
    case('tiny-bert', [0, 1, 3, 4, 12], 5)
    case('tiny-mpnet', [0, 2, 15, 16], 6)


if __name__ == '__main__':
    main()
