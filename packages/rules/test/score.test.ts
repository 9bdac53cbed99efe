import { describe, expect, it } from 'vitest';
import { type CompiledQuery, classify, compileQuery, type ScoringRule } from '../src/index.ts';
import { occurrence } from './support/occurrences.ts';

function query(text: string): CompiledQuery {
  const compiled = compileQuery(text);
  if (!compiled.ok) {
    throw compiled.error;
  }
  return compiled.value;
}

const event = occurrence({ summary: 'Acme sync', attendees: [{ email: 'ann@acme.com' }] });
const hit = query('title:sync');
const miss = query('title:retro');
const rule = (
  id: string,
  projectId: string,
  matches: boolean,
  extra: Partial<ScoringRule> = {},
): ScoringRule => ({
  id,
  projectId,
  query: matches ? hit : miss,
  ...extra,
});

describe('classify', () => {
  it('leaves an occurrence no rule matches pending with confidence 0', () => {
    expect(classify(event, [rule('r1', 'p1', false)])).toEqual({
      projectId: null,
      confidence: 0,
      needsReview: false,
      outcome: 'no_match',
      votes: [],
    });
    expect(classify(event, []).outcome).toBe('no_match');
  });

  it('classifies with full confidence when every vote agrees', () => {
    const result = classify(event, [
      rule('r1', 'p1', true),
      rule('r2', 'p1', true, { weight: 2 }),
      rule('r3', 'p2', false),
    ]);
    expect(result).toEqual({
      projectId: 'p1',
      confidence: 1,
      needsReview: false,
      outcome: 'classified',
      votes: [{ projectId: 'p1', score: 3, ruleIds: ['r1', 'r2'] }],
    });
  });

  it('classifies at 0.8 and above without review', () => {
    const result = classify(event, [rule('a', 'p1', true, { weight: 4 }), rule('b', 'p2', true)]);
    expect(result.projectId).toBe('p1');
    expect(result.confidence).toBe(0.8);
    expect(result.needsReview).toBe(false);
    expect(result.votes.map((v) => [v.projectId, v.score])).toEqual([
      ['p1', 4],
      ['p2', 1],
    ]);
  });

  it('classifies from 0.5 up to 0.8 with needsReview', () => {
    const twoThirds = classify(event, [rule('a', 'p1', true, { weight: 2 }), rule('b', 'p2', true)]);
    expect(twoThirds).toMatchObject({ projectId: 'p1', needsReview: true, outcome: 'classified' });
    expect(twoThirds.confidence).toBeCloseTo(2 / 3, 12);
    const half = classify(event, [
      rule('a', 'p1', true, { weight: 2 }),
      rule('b', 'p2', true),
      rule('c', 'p3', true),
    ]);
    expect(half).toMatchObject({
      projectId: 'p1',
      confidence: 0.5,
      needsReview: true,
      outcome: 'classified',
    });
    const justUnder = classify(event, [
      rule('a', 'p1', true, { weight: 0.79 }),
      rule('b', 'p2', true, { weight: 0.21 }),
    ]);
    expect(justUnder).toMatchObject({ projectId: 'p1', needsReview: true });
  });

  it('leaves the occurrence pending below 0.5', () => {
    const result = classify(event, [
      rule('a', 'p1', true, { weight: 2 }),
      rule('b', 'p2', true, { weight: 1.5 }),
      rule('c', 'p3', true, { weight: 1 }),
    ]);
    expect(result.projectId).toBeNull();
    expect(result.outcome).toBe('low_confidence');
    expect(result.needsReview).toBe(false);
    expect(result.confidence).toBeCloseTo(2 / 4.5, 12);
    expect(result.votes.map((v) => v.projectId)).toEqual(['p1', 'p2', 'p3']);
  });

  it('leaves a tie for first place pending', () => {
    const result = classify(event, [rule('a', 'p2', true), rule('b', 'p1', true)]);
    expect(result).toMatchObject({ projectId: null, confidence: 0.5, needsReview: false, outcome: 'tie' });
    expect(result.votes.map((v) => v.projectId)).toEqual(['p1', 'p2']);
    const fractional = classify(event, [
      rule('a', 'p1', true, { weight: 0.1 }),
      rule('b', 'p1', true, { weight: 0.2 }),
      rule('c', 'p2', true, { weight: 0.3 }),
    ]);
    expect(fractional.outcome).toBe('tie');
  });

  it('ignores disabled rules and rules without a positive finite weight', () => {
    const result = classify(event, [
      rule('a', 'p1', true),
      rule('b', 'p2', true, { enabled: false, weight: 10 }),
      rule('c', 'p2', true, { weight: 0 }),
      rule('d', 'p2', true, { weight: -5 }),
      rule('e', 'p2', true, { weight: Number.NaN }),
      rule('f', 'p2', true, { weight: Number.POSITIVE_INFINITY }),
    ]);
    expect(result).toMatchObject({ projectId: 'p1', confidence: 1, outcome: 'classified' });
    expect(result.votes).toEqual([{ projectId: 'p1', score: 1, ruleIds: ['a'] }]);
  });

  it('evaluates real queries against the occurrence', () => {
    const rules: ScoringRule[] = [
      { id: 'acme', projectId: 'prj_acme', query: query('domain:acme.com'), weight: 3 },
      { id: 'sync', projectId: 'prj_internal', query: query('title:sync -domain:acme.com') },
      { id: 'any', projectId: 'prj_internal', query: query('title:sync'), weight: 1 },
    ];
    expect(classify(event, rules)).toMatchObject({
      projectId: 'prj_acme',
      confidence: 0.75,
      needsReview: true,
      votes: [
        { projectId: 'prj_acme', score: 3, ruleIds: ['acme'] },
        { projectId: 'prj_internal', score: 1, ruleIds: ['any'] },
      ],
    });
  });
});
