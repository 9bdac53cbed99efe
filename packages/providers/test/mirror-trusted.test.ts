import { describe, expect, it } from 'vitest';
import { type MirrorVersionWatch, TrustedStates } from '../src/mirror/trusted.ts';

/** A watch whose announcements the test sends. */
function watch() {
  const subscribers: { changed(id: string): void; reset(): void }[] = [];
  const source = {
    live: true,
    subscribe(events: { changed(id: string): void; reset(): void }) {
      subscribers.push(events);
      return () => {};
    },
    announce: (id: string) => {
      for (const s of subscribers) {
        s.changed(id);
      }
    },
    lose: () => {
      source.live = false;
      for (const s of subscribers) {
        s.reset();
      }
    },
  };
  return source satisfies MirrorVersionWatch;
}

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
