#!/usr/bin/env python3
"""Regenerates the Unicode tables of src/encode/unicode_tables.c (between the markers
"BEGIN GENERATED UNICODE TABLES" and "END GENERATED UNICODE TABLES") from
Python's unicodedata, the character classes HuggingFace tokenizers' BertNormalizer
and BertPreTokenizer use:

  class runs   every code point's class: letter/other (L), whitespace (W),
               control/format/unassigned/private/surrogate "other" (C, removed by
               clean_text), nonspacing mark (M, removed by accent stripping),
               punctuation (P: Unicode P* or ASCII punctuation) and CJK
               ideograph (H, padded with spaces by handle_chinese_chars);
  strip map    NFD decomposition with the nonspacing marks removed, for code
               points where that differs from the code point itself (Hangul
               syllables are decomposed algorithmically in C);
  lower runs   the one-code-point lowercase mapping as runs (start, end, delta,
               stride); U+0130 (the only two-code-point mapping) is special-cased.

Usage: python3 dev/bert_unicode.py [src/encode/unicode_tables.c]   (rewrites the file in place)
"""
import sys
import unicodedata as u

ASCII_PUNCT = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')
CJK = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
       (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]
CLASSES = 'LWCMPH'


def cls(c):
    ch = chr(c)
    cat = u.category(ch)
    if ch in '\t\n\r' or cat[0] == 'Z':  # Rust's White_Space outside category C
        return 'W'
    if cat[0] == 'C':
        return 'C'
    if cat == 'Mn':
        return 'M'
    if cat[0] == 'P' or ch in ASCII_PUNCT:
        return 'P'
    if any(a <= c <= b for a, b in CJK):
        return 'H'
    return 'L'


def tables():
    out = []
    runs, prev = [], None
    for c in range(0x110000):
        k = cls(c)
        if k != prev:
            runs.append((c, k))
            prev = k
    out.append('/* Unicode %s.  Class runs: start << 3 | class (0 L, 1 W, 2 C, 3 M, 4 P, 5 H). */' % u.unidata_version)
    out.append('static const uint32_t uc_class_runs[%d] = {' % len(runs))
    items = ['0x%x' % (c << 3 | CLASSES.index(k)) for c, k in runs]
    out += wrap(items)
    out.append('};')

    single, multi = [], []
    for c in range(0x110000):
        if 0xAC00 <= c <= 0xD7A3:
            continue
        d = u.normalize('NFD', chr(c))
        if d == chr(c):
            continue
        s = [ord(x) for x in d if u.category(x) != 'Mn']
        if s == [c]:
            continue
        (single if len(s) == 1 else multi).append((c, s))
    out.append('/* NFD without nonspacing marks: code point -> one code point. */')
    out.append('static const uint32_t uc_strip1[%d][2] = {' % len(single))
    out += wrap(['{0x%x, 0x%x}' % (c, s[0]) for c, s in single])
    out.append('};')
    out.append('/* ... -> zero to three code points (0-terminated). */')
    out.append('static const uint32_t uc_stripn[%d][4] = {' % len(multi))
    out += wrap(['{0x%x, %s}' % (c, ', '.join('0x%x' % x for x in (s + [0, 0, 0])[:3])) for c, s in multi])
    out.append('};')

    low = []
    for c in range(0x110000):
        l = chr(c).lower()
        if l != chr(c) and len(l) == 1:
            low.append((c, ord(l) - c))
    runs2 = []
    for c, d in low:
        if runs2:
            s, e, dd, st = runs2[-1]
            if dd == d and c - e in (1, 2) and st in (0, c - e):
                runs2[-1] = (s, c, d, c - e)
                continue
        runs2.append((c, c, d, 0))
    out.append('/* Lowercase: runs {first, last, delta, stride} (stride 0: one code point). */')
    out.append('static const int32_t uc_lower_runs[%d][4] = {' % len(runs2))
    out += wrap(['{0x%x, 0x%x, %d, %d}' % r for r in runs2])
    out.append('};')
    return out


def wrap(items, width=100):
    lines, cur = [], '   '
    for it in items:
        if len(cur) + len(it) + 2 > width:
            lines.append(cur)
            cur = '   '
        cur += ' ' + it + ','
    if cur.strip():
        lines.append(cur)
    return lines


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else 'src/encode/unicode_tables.c'
    text = open(path, encoding='utf-8').read()
    begin = '/* BEGIN GENERATED UNICODE TABLES (dev/bert_unicode.py) */\n'
    end = '/* END GENERATED UNICODE TABLES */\n'
    i, j = text.index(begin) + len(begin), text.index(end)
    text = text[:i] + '\n'.join(tables()) + '\n' + text[j:]
    open(path, 'w', encoding='utf-8').write(text)


if __name__ == '__main__':
    main()
