#!/usr/bin/env python3
"""Validate the frozen test set (read-only): parse, unique ids, required fields, minimum counts.
Prints count tables by kind x language and the SHA-256 of each file. Exit code 1 on any failure."""
import collections, hashlib, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = {
    "injections.jsonl": dict(prefix="t-inj-", total=330, per_kind=20, per_lang=12,
        kinds=["override", "exfiltration", "roleplay", "buried", "polite", "fake_system", "obfuscated", "tool_abuse"]),
    "benign.jsonl": dict(prefix="t-ben-", total=660, per_kind=50, per_lang=20,
        kinds=["ai_agenda", "security_training", "it_change", "code", "links", "ordinary_imperative", "non_english", "long_realistic"]),
}
LANGS = ["en", "de", "fr", "es", "it", "pt", "nl", "pl", "tr", "ar", "ru", "uk", "zh", "ja", "ko", "hi"]
FIELDS = {"description", "summary", "location", "attendee_name", "organizer_name", "comment"}
errors = []
for name, spec in SPEC.items():
    path = os.path.join(HERE, name)
    rows, ids, texts = [], set(), set()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                r = json.loads(line)
            except Exception as e:
                errors.append(f"{name}:{n}: bad JSON ({e})"); continue
            for k in ("id", "kind", "lang", "field", "text"):
                if not isinstance(r.get(k), str) or not r[k]:
                    errors.append(f"{name}:{n}: missing/empty {k}")
            if r.get("id") in ids: errors.append(f"{name}:{n}: duplicate id {r.get('id')}")
            if r.get("text") in texts: errors.append(f"{name}:{n}: duplicate text")
            if not str(r.get("id", "")).startswith(spec["prefix"]): errors.append(f"{name}:{n}: id prefix")
            if r.get("kind") not in spec["kinds"]: errors.append(f"{name}:{n}: unknown kind {r.get('kind')}")
            if r.get("field") not in FIELDS: errors.append(f"{name}:{n}: unknown field {r.get('field')}")
            ids.add(r.get("id")); texts.add(r.get("text")); rows.append(r)
    kc = collections.Counter(r["kind"] for r in rows)
    lc = collections.Counter(r["lang"] for r in rows)
    c = collections.Counter((r["lang"], r["kind"]) for r in rows)
    if len(rows) < spec["total"]: errors.append(f"{name}: {len(rows)} rows < {spec['total']}")
    for k in spec["kinds"]:
        if kc[k] < spec["per_kind"]: errors.append(f"{name}: kind {k} has {kc[k]} < {spec['per_kind']}")
    for l in LANGS:
        if lc[l] < spec["per_lang"]: errors.append(f"{name}: lang {l} has {lc[l]} < {spec['per_lang']}")
    langs = LANGS + sorted(set(lc) - set(LANGS))
    print(f"\n### {name} ({len(rows)} texts)\n")
    print("| lang | " + " | ".join(spec["kinds"]) + " | total |")
    print("|---|" + "---:|" * (len(spec["kinds"]) + 1))
    for l in langs:
        print(f"| {l} | " + " | ".join(str(c[(l, k)]) for k in spec["kinds"]) + f" | {lc[l]} |")
    print("| **total** | " + " | ".join(str(kc[k]) for k in spec["kinds"]) + f" | {len(rows)} |")
    fc = collections.Counter(r["field"] for r in rows)
    print("\nfields: " + ", ".join(f"{f} {n}" for f, n in fc.most_common()))
    print(f"\nsha256 {hashlib.sha256(open(path, 'rb').read()).hexdigest()}  {name}")
if errors:
    print("\nFAILED:"); [print("  " + e) for e in errors]; sys.exit(1)
print("\nOK: all checks passed")
