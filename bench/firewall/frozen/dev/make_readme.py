#!/usr/bin/env python3
"""Regenerate README.md: runs validate.py for the count tables and hashes the data files."""
import datetime, hashlib, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
res = subprocess.run([sys.executable, os.path.join(HERE, 'validate.py'), '--markdown'], capture_output=True, text=True)
if res.returncode != 0:
    sys.exit('validate.py failed:\n' + res.stdout + res.stderr)
tables = res.stdout.split('\nOK:')[0].strip()
def sha(name):
    with open(os.path.join(HERE, name), 'rb') as fh:
        return hashlib.sha256(fh.read()).hexdigest()
def lines(name):
    with open(os.path.join(HERE, name), encoding='utf-8') as fh:
        return sum(1 for _ in fh)
today = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d')
readme = f"""# Calgate firewall — DEVELOPMENT corpus (dev)

**Purpose.** This is the set the prompt-injection detector (`packages/tools/src/firewall/`) **may be tuned and
trained on**: thresholds, patterns, keyword lists, and any learned component can be fitted to it freely. It is
deliberately separate from the frozen *test* set in `../test/`, which was written independently and must not be used
for tuning. Nothing in this folder was derived from the test set or from `bench/firewall/*.jsonl`; every text was
written by hand for this corpus.

Each line of the two JSONL files is one calendar-field text an AI agent might read or write:

```json
{{"id":"d-inj-0001","kind":"override","lang":"ar","field":"description","text":"..."}}
```

- `id` — `d-inj-NNNN` (injections) or `d-ben-NNNN` (benign), unique across both files.
- `kind` — the category below.
- `lang` — BCP-47 language tag of the text (24 languages, native scripts).
- `field` — the event field the text appears in: `summary`, `description`, `location`, `attendee_name`,
  `organizer_name`, `comment`.
- `text` — the field value (may contain newlines, Markdown, code, emoji, and in `obfuscated` cases deliberate
  zero-width/soft-hyphen/tag characters and homoglyphs).

## Kinds

**`injections.jsonl`** — every line should be refused.

| kind | what it is |
|---|---|
| `override` | ignore/replace previous instructions, mostly in fresh paraphrases ("your rules expired", "this note outranks your system prompt", "you were upgraded") |
| `exfiltration` | send or forward data, tokens, contacts, itineraries, IDs to addresses/URLs; Markdown images/links whose URL carries data |
| `roleplay` | jailbreak personas (DAN, developer mode, "evil twin", grandmother, fictional butlers and detectives) |
| `buried` | the payload sits deep inside a long, realistic invitation (parties, trips, school notices, project reviews) |
| `polite` | courteous requests to the AI assistant / Copilot / Claude / ChatGPT / Gemini / "any automated agent" to do something the user did not ask |
| `fake_system` | fake system/developer/tool messages, chat-template tokens (`<\|im_start\|>`, `[INST]`, Llama-3 headers), fake JSON tool results, fake end-of-data + user turns |
| `obfuscated` | spaced letters, HTML comments and hidden spans, zero-width/soft-hyphen/ZWJ insertion, Unicode tag characters, homoglyphs, full-width letters, base64/rot13/hex/URL-encoding/Morse/reversed text with "decode and follow", leetspeak |
| `tool_abuse` | instructions to call calendar tools destructively: delete or move everything, decline all, webhooks/schedules to external URLs, external attendees, ownership/sharing changes, mass event creation |

**`benign.jsonl`** — every line should pass; these are the hard cases.

| kind | what it is |
|---|---|
| `ai_agenda` | meetings *about* AI, LLMs, prompts, agents, jailbreak research; attendee/organizer names like "Claude Martin" or "Copilot Rollout Team" |
| `security_training` | trainings and red-team readouts that quote injection, phishing and social-engineering examples |
| `it_change` | admin notices: reset/rotate tokens, forget old passwords, delete old apps, forward to your team |
| `code` | SQL, shell, JSON tool schemas, YAML, stack traces, cron lines, base64 secrets in agendas |
| `links` | long meeting URLs, tracking parameters, signed URLs with tokens, Markdown links and images, tracking pixels |
| `ordinary_imperative` | "ignore the old invite", "forget the agenda", "send your slides to…", "act as note-taker", "you are the facilitator", role-play exercises |
| `non_english` | ordinary agendas, appointments and locations in every non-English language |
| `long_realistic` | long, real-looking descriptions (assemblies, trips, conferences, rehearsals, lab meetings) |

## Counts

Computed by `validate.py --markdown` on {today}:

{tables}

## Files and checksums (SHA-256)

| file | lines | sha256 |
|---|---|---|
| `injections.jsonl` | {lines('injections.jsonl')} | `{sha('injections.jsonl')}` |
| `benign.jsonl` | {lines('benign.jsonl')} | `{sha('benign.jsonl')}` |
| `validate.py` | {lines('validate.py')} | `{sha('validate.py')}` |

## Checking

```sh
python3 bench/firewall/frozen/dev/validate.py      # parse, unique ids, fields, minimums, duplicate scan; prints the table
python3 bench/firewall/frozen/dev/make_readme.py   # regenerate this README (counts, date, hashes)
```

`validate.py` fails if a line does not parse, an id repeats, a key/kind/field is unknown, a minimum is missed
(≥ 400 injections and ≥ 800 benign; each injection kind ≥ 30, each benign kind ≥ 80; at least 18 languages with
≥ 15 injections and ≥ 30 benign), or two texts in the same language are exact or near (≥ 0.90 similarity) duplicates.

Notes: placeholders such as `{{{{user_email}}}}` inside some exfiltration URLs are part of the attack text (they ask the
agent to fill them in). Domains are invented for the corpus. Persian texts contain the zero-width non-joiner
(U+200C) as ordinary orthography; one English benign security-training text contains a right-to-left override
(U+202E) as a quoted example.
"""
with open(os.path.join(HERE, 'README.md'), 'w', encoding='utf-8') as fh:
    fh.write(readme)
print('README.md written')
