/**
 * @calgate/store — the only package that talks to Postgres: the Prisma client, repositories,
 * the migration runner and the sealing of stored secrets.
 */
export { type Database, type DatabaseOptions, openDatabase, type Prisma } from './db.ts';
export {
  DEFAULT_MIGRATIONS_DIR,
  loadMigrations,
  type Migration,
  MigrationError,
  type MigrationReport,
  migrate,
} from './migrate.ts';
export { keyIdOf, SecretBox, type SecretBinding, type SealedSecret } from './secret-box.ts';
