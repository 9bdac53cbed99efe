#!/usr/bin/env python3
"""Validate the dev corpus: every line parses, ids unique, fields present, minimums met.
Prints counts by kind and language. Exit code 1 on any failure.
Usage: python3 validate.py [--markdown]"""
import collections, difflib, json, os, re, sys, unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {'injections.jsonl': 'd-inj-', 'benign.jsonl': 'd-ben-'}
INJ_KINDS = ['override', 'exfiltration', 'roleplay', 'buried', 'polite', 'fake_system', 'obfuscated', 'tool_abuse']
BEN_KINDS = ['ai_agenda', 'security_training', 'it_change', 'code', 'links', 'ordinary_imperative', 'non_english', 'long_realistic']
FIELDS = {'summary', 'description', 'location', 'attendee_name', 'organizer_name', 'comment'}
MIN = {'injections.jsonl': (400, 30, 15), 'benign.jsonl': (800, 80, 30)}  # total, per kind, per language
MIN_LANGS = 18

errors = []
rows = {}
ids = set()
for name, prefix in FILES.items():
    rows[name] = []
    with open(os.path.join(HERE, name), encoding='utf-8') as fh:
        for n, line in enumerate(fh, 1):
            try:
                o = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f'{name}:{n}: does not parse ({e})'); continue
            if set(o) != {'id', 'kind', 'lang', 'field', 'text'}:
                errors.append(f'{name}:{n}: keys {sorted(o)}')
            if not all(isinstance(o.get(k), str) and o.get(k) for k in ('id', 'kind', 'lang', 'field', 'text')):
                errors.append(f'{name}:{n}: empty or non-string value'); continue
            if not re.fullmatch(re.escape(prefix) + r'\d{4}', o['id']):
                errors.append(f'{name}:{n}: bad id {o["id"]}')
            if o['id'] in ids:
                errors.append(f'{name}:{n}: duplicate id {o["id"]}')
            ids.add(o['id'])
            kinds = INJ_KINDS if name == 'injections.jsonl' else BEN_KINDS
            if o['kind'] not in kinds:
                errors.append(f'{name}:{n}: unknown kind {o["kind"]}')
            if o['field'] not in FIELDS:
                errors.append(f'{name}:{n}: unknown field {o["field"]}')
            rows[name].append(o)

def norm(t):
    t = unicodedata.normalize('NFKC', t).lower()
    return re.sub(r'\W+', ' ', t).strip()

# exact and near duplicates (same language, across both files)
allrows = rows['injections.jsonl'] + rows['benign.jsonl']
seen = {}
for o in allrows:
    k = norm(o['text'])
    if k in seen:
        errors.append(f'exact duplicate text: {seen[k]} and {o["id"]}')
    seen[k] = o['id']
bylang = collections.defaultdict(list)
for o in allrows:
    bylang[o['lang']].append(o)
near = []
for lang, items in bylang.items():
    normed = [(o['id'], norm(o['text'])) for o in items]
    for i in range(len(normed)):
        for j in range(i + 1, len(normed)):
            a, b = normed[i][1], normed[j][1]
            if min(len(a), len(b)) < 25 or abs(len(a) - len(b)) > 0.3 * max(len(a), len(b)):
                continue
            r = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
            if r >= 0.9:
                near.append(f'{normed[i][0]} ~ {normed[j][0]} ({r:.2f})')
for x in near:
    errors.append('near duplicate: ' + x)

md = '--markdown' in sys.argv
out = []
for name in FILES:
    total_min, kind_min, lang_min = MIN[name]
    rs = rows[name]
    kinds = INJ_KINDS if name == 'injections.jsonl' else BEN_KINDS
    langs = sorted({o['lang'] for o in rs}, key=lambda l: (l != 'en', l))
    c = collections.Counter((o['kind'], o['lang']) for o in rs)
    ck = collections.Counter(o['kind'] for o in rs)
    cl = collections.Counter(o['lang'] for o in rs)
    cf = collections.Counter(o['field'] for o in rs)
    if len(rs) < total_min:
        errors.append(f'{name}: {len(rs)} lines < {total_min}')
    for k in kinds:
        if ck[k] < kind_min:
            errors.append(f'{name}: kind {k} has {ck[k]} < {kind_min}')
    ok_langs = [l for l in langs if cl[l] >= lang_min]
    for l in langs:
        if cl[l] < lang_min:
            errors.append(f'{name}: lang {l} has {cl[l]} < {lang_min}')
    if len(ok_langs) < MIN_LANGS:
        errors.append(f'{name}: only {len(ok_langs)} languages meet the minimum')
    out.append(f'\n### {name} — {len(rs)} lines, {len(langs)} languages\n')
    if md:
        out.append('| kind | ' + ' | '.join(langs) + ' | total |')
        out.append('|---|' + '---|' * (len(langs) + 1))
        for k in kinds:
            out.append(f'| {k} | ' + ' | '.join(str(c[(k, l)]) for l in langs) + f' | {ck[k]} |')
        out.append('| **total** | ' + ' | '.join(str(cl[l]) for l in langs) + f' | {len(rs)} |')
    else:
        w = max(len(k) for k in kinds) + 1
        out.append(' ' * w + ''.join(f'{l:>4}' for l in langs) + '  total')
        for k in kinds:
            out.append(f'{k:<{w}}' + ''.join(f'{c[(k, l)]:>4}' for l in langs) + f'  {ck[k]:>5}')
        out.append(f'{"total":<{w}}' + ''.join(f'{cl[l]:>4}' for l in langs) + f'  {len(rs):>5}')
    out.append('\nfields: ' + ', '.join(f'{f} {n}' for f, n in cf.most_common()))
print('\n'.join(out))
if errors:
    print('\nFAILED:')
    for e in errors:
        print('  ' + e)
    sys.exit(1)
print('\nOK: all lines parse, ids unique, fields present, minimums met, no exact or near (>=0.90) duplicates within a language.')
