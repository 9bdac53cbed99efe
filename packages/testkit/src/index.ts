/**
 * @calgate/testkit — real servers for tests. Vitest's global setup starts one PostgreSQL and one
 * Redis on free loopback ports; each test file clones a migrated database from a template.
 */
export { createTestDatabase, redisUrl, type TestDatabase } from './db.ts';
export { drivenWatch } from './driven-watch.ts';
export { collectGarbage } from './gc.ts';
export { type SeededRandom, seededRandom } from './random.ts';
export { cuttableRelay, type Relay } from './relay.ts';
export {
  freePort,
  postgresBinDir,
  type RunningServer,
  runAs,
  startPostgres,
  startRedis,
  waitForLine,
} from './servers.ts';
export { type Received, type Receiver, startReceiver, until } from './webhooks.ts';
