#!/usr/bin/env python3
"""Writes tests/fixtures/bert/: two tiny random-weight sentence encoders and
what sentence-transformers makes of them, plus (with --real) reference
outputs of the real models for a handful of texts.

  tiny-bert/    BERT, hidden 8, 2 layers, 2 heads, vocabulary of ~130 tokens,
                max_seq_length 16, no tokenizer.json (tokenizer_config.json +
                vocab.txt, the slow-tokenizer layout)
  tiny-mpnet/   MPNet, same sizes, 32 relative-position buckets,
                max_seq_length 36, with tokenizer.json (added tokens <s>,
                <pad>, </s>, <unk>, [UNK], <mask> with lstrip)
  tiny-bert.ref.json, tiny-mpnet.ref.json
                {"cases": [{"text", "ids", "embedding"}], "hidden": [[...]]
                 (last hidden states of case 0), "buckets": MPNet's
                 relative_position_bucket(rel) for rel = -600..600}
  real_texts.jsonl, <model>.ids.jsonl, <model>.npy   (--real MODELS_DIR)
                one state prompt per domain plus edge cases: the token ids
                and embeddings sentence-transformers produces with the real
                all-MiniLM-L6-v2 / all-mpnet-base-v2 weights.

Run with Debian's /usr/bin/python3 (python3-torch) and sentence-transformers
on PYTHONPATH (see dev/bert_reference.py):

  PYTHONPATH=DIR /usr/bin/python3 dev/bert_fixture.py [--out tests/fixtures/bert]
      [--real ~/.cache/nextstate/models --prompts PROMPTS.jsonl]
"""
import argparse
import json
import os
import shutil

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')

import numpy as np  # noqa: E402
import torch  # noqa: E402

WORDS = ('the a is at of and to car ferry location empty hello world cafe de ##ja vu un ##aff ##able '
         'problem description state goal current block on table clear truck package in north 0 1 2 3 '
         '10 ##s ##ing ##ed x y 北 σ ##α ##σ ᄒ ##ᅡ ##ᆫ i').split()
PUNCT = list('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')
LETTERS = [c for c in 'abcdefghijklmnoprstuvwy']  # no q, x as a start is a word, no z: "quiz" is [UNK]

TEXTS = [
    'Hello, World! The car is at location l0.',
    'Café déjà vu',
    'unaffable',
    'quiz',
    'a-b $5 (x) {y} ~ `',
    '[CLS] hello [SEP] world [UNK] [unk] [MASK]',
    'hello <mask> world <unk> <UNK> </s>x<s>',
    '北京 is north',
    'a\x00b\u200bc\u0007d\ufffde',
    'a\tb\u00a0c\u3000d\ne\r\nf',
    'x' * 101 + ' hello',
    'ΣΑΣ İi 한',
    '',
    '   ',
    ' '.join(['hello world'] * 30),
    '### PROBLEM DESCRIPTION ###\nThis is a ferry domain. There are 2 cars and 1 location.\n\n'
    '### CURRENT STATE ###\nCar c0 is at location l0, and The ferry is empty\n\n'
    '### GOAL DESCRIPTION ###\nCar c0 is at location l1',
]


def vocab_bert():
    v = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    v += PUNCT + LETTERS + ['##' + c for c in LETTERS] + ['##' + d for d in '0123456789'] + list('0123456789')
    for w in WORDS:
        if w not in v:
            v.append(w)
    return v


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if 'LayerNorm.weight' in name:
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith('bias'):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif 'embeddings' in name or 'relative_attention_bias' in name:
                p.copy_(torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.5 * torch.randn(p.shape, generator=g))


def st_files(d, max_seq, hidden):
    os.makedirs(os.path.join(d, '1_Pooling'), exist_ok=True)
    json.dump({'max_seq_length': max_seq, 'do_lower_case': False}, open(os.path.join(d, 'sentence_bert_config.json'), 'w'))
    json.dump([{'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
               {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'},
               {'idx': 2, 'name': '2', 'path': '2_Normalize', 'type': 'sentence_transformers.models.Normalize'}],
              open(os.path.join(d, 'modules.json'), 'w'), indent=1)
    json.dump({'word_embedding_dimension': hidden, 'pooling_mode_cls_token': False, 'pooling_mode_mean_tokens': True,
               'pooling_mode_max_tokens': False, 'pooling_mode_mean_sqrt_len_tokens': False},
              open(os.path.join(d, '1_Pooling', 'config.json'), 'w'), indent=1)


def f32(x):
    return [float(np.float32(v)) for v in x]


def reference(d, texts, out_json):
    from sentence_transformers import SentenceTransformer
    from transformers.models.mpnet.modeling_mpnet import MPNetEncoder
    st = SentenceTransformer(d, device='cpu')
    cases = []
    emb = st.encode(texts, batch_size=4, convert_to_numpy=True)
    for t, e in zip(texts, emb):
        ids = st.tokenize([t])['input_ids'][0].tolist()
        cases.append({'text': t, 'ids': ids, 'embedding': f32(e)})
    feats = st.tokenize([texts[0]])
    with torch.no_grad():
        hidden = st[0].auto_model(**feats).last_hidden_state[0].numpy()
    rel = torch.arange(-600, 601)
    buckets = MPNetEncoder.relative_position_bucket(rel, num_buckets=32).tolist()
    ref = {'max_seq_length': st.max_seq_length, 'cases': cases, 'hidden': [f32(r) for r in hidden],
           'buckets_from': -600, 'buckets': buckets}
    with open(out_json, 'w', encoding='utf-8') as f:
        json.dump(ref, f, ensure_ascii=False, separators=(',', ':'))
        f.write('\n')


def tiny_bert(out):
    from transformers import BertConfig, BertModel
    d = os.path.join(out, 'tiny-bert')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    vocab = vocab_bert()
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=16, max_position_embeddings=24, type_vocab_size=2)
    torch.manual_seed(7)
    m = BertModel(cfg, add_pooling_layer=False)
    randomize(m, 7)
    m.save_pretrained(d, safe_serialization=True)
    open(os.path.join(d, 'vocab.txt'), 'w', encoding='utf-8').write(''.join(t + '\n' for t in vocab))
    json.dump({'do_lower_case': True, 'tokenize_chinese_chars': True, 'strip_accents': None,
               'model_max_length': 16, 'tokenizer_class': 'BertTokenizer'},
              open(os.path.join(d, 'tokenizer_config.json'), 'w'))
    json.dump({'unk_token': '[UNK]', 'sep_token': '[SEP]', 'pad_token': '[PAD]', 'cls_token': '[CLS]',
               'mask_token': '[MASK]'}, open(os.path.join(d, 'special_tokens_map.json'), 'w'))
    st_files(d, 16, 8)
    reference(d, TEXTS, os.path.join(out, 'tiny-bert.ref.json'))


def tiny_mpnet(out):
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizerFast
    d = os.path.join(out, 'tiny-mpnet')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    vocab = ['<s>', '<pad>', '</s>', '<unk>'] + vocab_bert() + ['<mask>']
    vf = os.path.join(out, 'mpnet-vocab.tmp')
    open(vf, 'w', encoding='utf-8').write(''.join(t + '\n' for t in vocab))
    tok = MPNetTokenizerFast(vocab_file=vf, do_lower_case=True, model_max_length=36)
    os.remove(vf)
    tok.save_pretrained(d)
    for extra in ('added_tokens.json',):
        if os.path.exists(os.path.join(d, extra)):
            os.remove(os.path.join(d, extra))
    cfg = MPNetConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=16, max_position_embeddings=40, relative_attention_num_buckets=32,
                      pad_token_id=1, bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5)
    torch.manual_seed(11)
    m = MPNetModel(cfg, add_pooling_layer=False)
    randomize(m, 11)
    m.save_pretrained(d, safe_serialization=True)
    st_files(d, 36, 8)
    reference(d, TEXTS + [' '.join(['the car is at'] * 12)], os.path.join(out, 'tiny-mpnet.ref.json'))


def real(out, models, prompts):
    from sentence_transformers import SentenceTransformer
    texts = [json.loads(l) for l in open(prompts, encoding='utf-8') if l.strip()]
    # one prompt per domain: the prompts file lists domains in blocks
    k = 9
    per = len(texts) // k
    picked = [texts[i * per] for i in range(k)]
    picked += ['Café déjà vu — naïve coöperation! İstanbul ΣΑΣ 北京 <mask> [UNK] <unk> <UNK>',
               '(board c1 l1)', 'x', '', 'Hello, world!']
    with open(os.path.join(out, 'real_texts.jsonl'), 'w', encoding='utf-8') as f:
        for t in picked:
            f.write(json.dumps(t) + '\n')
    for name in ('all-MiniLM-L6-v2', 'all-mpnet-base-v2'):
        d = os.path.join(models, name)
        if not os.path.exists(os.path.join(d, 'model.safetensors')):
            print('skip', name)
            continue
        st = SentenceTransformer(d, device='cpu')
        emb = st.encode(picked, batch_size=8, convert_to_numpy=True)
        np.save(os.path.join(out, name + '.npy'), emb.astype(np.float32))
        with open(os.path.join(out, name + '.ids.jsonl'), 'w') as f:
            for t in picked:
                f.write(json.dumps(st.tokenize([t])['input_ids'][0].tolist()) + '\n')
        print('wrote', name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', default='tests/fixtures/bert')
    ap.add_argument('--real', help='folder holding all-MiniLM-L6-v2/ and all-mpnet-base-v2/')
    ap.add_argument('--prompts', help='prompts JSONL (dev/bert_reference.py prompts), 9 domains in blocks')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(1)
    tiny_bert(a.out)
    tiny_mpnet(a.out)
    if a.real:
        real(a.out, a.real, a.prompts)


if __name__ == '__main__':
    main()
