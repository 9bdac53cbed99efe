/**
 * A full garbage collection on demand, for tests of code whose correctness must not depend on
 * when the collector runs (objects held only weakly, finalizers).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/** Collects garbage now, as `node --expose-gc`'s `gc()` does, without that flag at start. */
export function collectGarbage(): void {
  if (collect === undefined) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
}
