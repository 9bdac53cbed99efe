/**
 * Another Calgate process using an Outlook mailbox's Graph limits in Redis, for tests that kill
 * it: `node mailbox-holder.ts <redisUrl> <mailbox> hold <n> <leaseMs>` takes n of the mailbox's
 * slots for requests that never end (renewing their leases while it lives) and prints `held`;
 * `… spend <n>` spends what is left of the mailbox's Graph requests for the window (up to n) and prints `spent`.
 * Then it waits to be killed.
 */
import { connectRedis, RedisWindowBudget, redisReady } from '@calgate/locks';
import { GRAPH_MAILBOX_BUDGET } from '@calgate/providers';
import { SharedMailboxLimits } from '../src/microsoft/mailbox-limits.ts';
import { OutageLog } from '../src/outage-log.ts';

const [redisUrl = '', mailbox = '', mode = 'hold', count = '4', leaseMs = '15000'] = process.argv.slice(2);
const redis = connectRedis(redisUrl, { name: 'calgate-test-holder' });
await redisReady(redis);
if (mode === 'spend') {
  // The same budget the gateways keep (SharedMailboxLimits' default prefix), spent to the last
  // request: as much as fits, halving what is asked until not one more does.
  const budget = new RedisWindowBudget(redis, GRAPH_MAILBOX_BUDGET, 'calgate:graph:budget:');
  let cost = Number(count);
  while (cost >= 1) {
    if (!(await budget.take(mailbox, cost)).allowed) {
      cost = Math.floor(cost / 2);
    }
  }
  process.stdout.write('spent\n');
} else {
  const quiet = { warn: () => {}, info: () => {} };
  const limits = new SharedMailboxLimits(
    redis,
    new OutageLog(quiet, { dependency: 'redis', down: '', up: '' }),
    {
      leaseMs: Number(leaseMs),
    },
  );
  let held = 0;
  for (let i = 0; i < Number(count); i++) {
    void limits.for(mailbox).run(
      () =>
        new Promise<never>(() => {
          held += 1;
          if (held === Number(count)) {
            process.stdout.write('held\n');
          }
        }),
    );
  }
}
setInterval(() => {}, 60_000);
