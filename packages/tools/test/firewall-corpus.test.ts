import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { screenText } from '../src/firewall.ts';

interface Entry {
  id: string;
  kind: string;
  lang: string;
  field: string;
  text: string;
}

function corpus(name: string): Entry[] {
  return readFileSync(new URL(`../../../bench/firewall/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Entry);
}

const injections = corpus('injections.jsonl');
const benign = corpus('benign.jsonl');

describe('write firewall on the corpus (bench/firewall)', () => {
  it('has the corpus the targets are measured on', () => {
    expect(injections.length).toBeGreaterThanOrEqual(200);
    expect(benign.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(benign.map((entry) => entry.lang)).size).toBeGreaterThanOrEqual(10);
  });

  it('refuses at least 95 % of the injection payloads, naming the field', () => {
    const missed = injections.filter((entry) => {
      const result = screenText(entry.field, entry.text);
      if (!result.ok) {
        expect(result.error.message).toContain(`'${entry.field}'`);
      }
      return result.ok;
    });
    const rate = (injections.length - missed.length) / injections.length;
    expect(rate, `passed: ${missed.map((entry) => entry.id).join(', ')}`).toBeGreaterThanOrEqual(0.95);
  });

  it('refuses none of the benign meeting texts and leaves them as written', () => {
    const refused: string[] = [];
    for (const entry of benign) {
      const result = screenText(entry.field, entry.text);
      if (!result.ok) {
        refused.push(`${entry.id}: ${result.error.message}`);
      } else {
        expect(result.value.value).toBe(entry.text);
      }
    }
    expect(refused).toEqual([]);
  });
});
