#!/usr/bin/env python3
"""Reference side of the neural text encoder (issue #7): sentence-transformers
embeddings, token ids and timings to compare `nextstate embed` against.

Runs under Debian's interpreter with python3-torch (apt) and
sentence-transformers installed without dependencies, e.g.

  apt-get install python3-torch python3-numpy python3-sklearn python3-scipy python3-tqdm python3-pip
  /usr/bin/python3 -m pip install --no-deps --target DIR sentence-transformers==2.7.0 \
      transformers==4.40.2 tokenizers==0.19.1 huggingface_hub==0.23.4 safetensors==0.4.3 \
      regex filelock fsspec packaging pyyaml requests typing_extensions urllib3 idna certifi charset-normalizer
  PYTHONPATH=DIR /usr/bin/python3 dev/bert_reference.py ...

(bench/embed.sh does this into ~/.cache/nextstate/pyref).  Nothing is fetched
from a model hub: models load from local folders (HF_HUB_OFFLINE=1).

  prompts OUT.jsonl EXPORT.jsonl... [-n 200]
      distinct state prompts ("state_text") of `nextstate data export --text`
      files, spread evenly over the files (domains) and over each file's
      prompts; one JSON string per line.
  embed MODEL_DIR TEXTS.jsonl OUT.npy [--ids IDS.jsonl] [--batch 32] [--threads 2] [--repeat 1]
      sentence-transformers embeddings (float32 [N, D]); --ids writes the
      model-input token ids of each text, one JSON list per line; prints the
      best of --repeat timings as "reference: N texts in S s (R texts/s, C CPU s)"
      (CPU s: process time of all threads, robust to other load on the machine).
  compare A.npy B.npy
      cosine similarity of matching rows: min / mean / max and the worst row.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')


def read_texts(path):
    with open(path, encoding='utf-8') as f:
        return [json.loads(line) for line in f if line.strip()]


def cmd_prompts(a):
    per_file = []
    for p in a.exports:
        seen, texts = set(), []
        with open(p, encoding='utf-8') as f:
            for line in f:
                t = json.loads(line)['state_text']
                if t not in seen:
                    seen.add(t)
                    texts.append(t)
        per_file.append(texts)
    k = len(per_file)
    # an equal share per file; what a small file cannot give goes to the others
    want = [0] * k
    left = a.n
    while left > 0 and any(want[i] < len(t) for i, t in enumerate(per_file)):
        for i, t in enumerate(per_file):
            if left > 0 and want[i] < len(t):
                want[i] += 1
                left -= 1
    out = []
    for texts, w in zip(per_file, want):
        step = len(texts) / w if w else 0
        out += [texts[int(j * step)] for j in range(w)]
    with open(a.out, 'w', encoding='utf-8') as f:
        for t in out:
            f.write(json.dumps(t) + '\n')
    print('prompts: %d texts from %d files -> %s' % (len(out), k, a.out))


def cmd_embed(a):
    import numpy as np
    import torch
    torch.set_num_threads(a.threads)
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(a.model, device='cpu')
    texts = read_texts(a.texts)
    best = cpu = None
    for _ in range(a.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        emb = model.encode(texts, batch_size=a.batch, convert_to_numpy=True, show_progress_bar=False)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if best is None or dt < best:
            best, cpu = dt, dc
    np.save(a.out, emb.astype(np.float32))
    print('reference: %d texts in %.3f s (%.2f texts/s, %.3f CPU s), batch %d, %d threads, max_seq_length %d'
          % (len(texts), best, len(texts) / best, cpu, a.batch, torch.get_num_threads(), model.max_seq_length))
    if a.ids:
        with open(a.ids, 'w') as f:
            for t in texts:
                ids = model.tokenize([t])['input_ids'][0].tolist()
                f.write(json.dumps(ids) + '\n')


def cmd_compare(a):
    import numpy as np
    x, y = np.load(a.a).astype(np.float64), np.load(a.b).astype(np.float64)
    if x.shape != y.shape:
        sys.exit('compare: shapes differ: %s vs %s' % (x.shape, y.shape))
    cos = (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
    print('cosine over %d rows: min %.7f  mean %.7f  max %.7f  (worst row %d); max |diff| %.2e'
          % (len(cos), cos.min(), cos.mean(), cos.max(), int(cos.argmin()), float(np.abs(x - y).max())))
    if a.min is not None and cos.min() < a.min:
        sys.exit('compare: minimum cosine %.7f below %.7f' % (cos.min(), a.min))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('prompts')
    p.add_argument('out')
    p.add_argument('exports', nargs='+')
    p.add_argument('-n', type=int, default=200)
    p.set_defaults(fn=cmd_prompts)
    p = sub.add_parser('embed')
    p.add_argument('model')
    p.add_argument('texts')
    p.add_argument('out')
    p.add_argument('--ids')
    p.add_argument('--batch', type=int, default=32)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--repeat', type=int, default=1)
    p.set_defaults(fn=cmd_embed)
    p = sub.add_parser('compare')
    p.add_argument('a')
    p.add_argument('b')
    p.add_argument('--min', type=float)
    p.set_defaults(fn=cmd_compare)
    a = ap.parse_args()
    a.fn(a)


if __name__ == '__main__':
    main()
