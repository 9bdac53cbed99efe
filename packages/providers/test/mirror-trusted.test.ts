import { drivenWatch } from '@calgate/testkit';
import { describe, expect, it } from 'vitest';
import { TrustedStates } from '../src/mirror/trusted.ts';

const watch = drivenWatch;

const state = { syncedAt: 1_000, version: '7' };

describe('states kept while no change is announced', () => {
  it('keeps a state until its calendar is announced or forgotten', () => {
    const source = watch();
    const trusted = new TrustedStates(source);
    trusted.remember('cal_a', state, trusted.mark());
    trusted.remember('cal_b', state, trusted.mark());
    expect(trusted.get('cal_a')).toEqual(state);
    source.announce('cal_a');
    expect(trusted.get('cal_a')).toBeUndefined();
    expect(trusted.get('cal_b')).toEqual(state);
    trusted.forget('cal_b');
    expect(trusted.get('cal_b')).toBeUndefined();
  });

  it('does not keep a read that an announcement of its calendar overtook', () => {
    const source = watch();
    const trusted = new TrustedStates(source);
    const mark = trusted.mark();
    source.announce('cal_a');
    source.announce('cal_other');
    trusted.remember('cal_a', state, mark);
    expect(trusted.get('cal_a')).toBeUndefined();
    // Another calendar's announcement does not matter.
    const later = trusted.mark();
    source.announce('cal_other');
    trusted.remember('cal_a', state, later);
    expect(trusted.get('cal_a')).toEqual(state);
  });

  it('trusts nothing while announcements cannot be heard, nor what was read before they were lost', () => {
    const source = watch();
    const trusted = new TrustedStates(source);
    trusted.remember('cal_a', state, trusted.mark());
    const mark = trusted.mark();
    source.lose();
    expect(trusted.get('cal_a')).toBeUndefined();
    trusted.remember('cal_b', state, trusted.mark());
    expect(trusted.get('cal_b')).toBeUndefined();
    // Listening again is announced as a reset too (MirrorVersionListener).
    source.lose();
    source.live = true;
    trusted.remember('cal_c', state, mark);
    expect(trusted.get('cal_c')).toBeUndefined();
    trusted.remember('cal_c', state, trusted.mark());
    expect(trusted.get('cal_c')).toEqual(state);
  });
});
