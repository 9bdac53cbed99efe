import { access, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configTable, envExample, TABLE_END, TABLE_START } from '../../../scripts/docs-config.ts';
import { Env } from '../src/config.ts';
import { SETTING_DESCRIPTIONS, settingDocs } from '../src/config-reference.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFile(`${ROOT}${path}`, 'utf8');
const NAMES = Object.keys(Env.shape);

describe('the configuration reference', () => {
  it('describes every setting of the schema, and nothing else', () => {
    expect(NAMES.filter((name) => SETTING_DESCRIPTIONS[name] === undefined)).toEqual([]);
    expect(Object.keys(SETTING_DESCRIPTIONS).filter((name) => !NAMES.includes(name))).toEqual([]);
    expect(settingDocs().find((doc) => doc.name === 'PORT')?.defaultValue).toBe('8787');
    expect(settingDocs().find((doc) => doc.name === 'DATABASE_URL')?.defaultValue).toBeUndefined();
  });

  it('docs/settings.md lists every setting, and its table is what npm run docs:generate writes', async () => {
    const page = await read('docs/settings.md');
    const block = page.slice(page.indexOf(TABLE_START), page.indexOf(TABLE_END) + TABLE_END.length);
    expect(NAMES.filter((name) => !block.includes(`| \`${name}\` |`))).toEqual([]);
    expect(block, 'run npm run docs:generate').toBe(configTable());
  });

  it('.env.example lists every setting, and is what npm run docs:generate writes', async () => {
    const example = await read('.env.example');
    expect(NAMES.filter((name) => !new RegExp(`^(# )?${name}=`, 'm').test(example))).toEqual([]);
    expect(example, 'run npm run docs:generate').toBe(envExample());
  });
});

interface ComposeService {
  image?: string;
  build?: unknown;
  env_file?: string | string[];
  environment?: Record<string, string>;
  secrets?: string[];
  profiles?: string[];
  command?: string[];
  ports?: string[];
  volumes?: string[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  secrets: Record<string, { file: string }>;
}

describe('docker-compose.yml', () => {
  async function compose(): Promise<ComposeFile> {
    return parse(await read('docker-compose.yml'), { merge: true }) as ComposeFile;
  }

  it('builds one image once and runs every Calgate service from it, with .env', async () => {
    const { services } = await compose();
    const app = ['migrate', 'gateway', 'worker'];
    expect(Object.keys(services).filter((name) => services[name]?.build !== undefined)).toEqual(['migrate']);
    const images = new Set(app.map((name) => services[name]?.image));
    expect([...images]).toEqual([`\${CALGATE_IMAGE:-calgate:local}`]);
    for (const name of app) {
      expect(services[name]?.env_file, name).toBe('.env');
    }
  });

  it("starts the gateway as the image's CMD does, heap flags included", async () => {
    const { services } = await compose();
    const cmd = (await read('Dockerfile'))
      .split('\n')
      .filter((line) => line.startsWith('CMD '))
      .at(-1);
    expect(services.gateway?.command).toEqual(JSON.parse(cmd?.slice('CMD '.length) ?? 'null'));
  });

  it('derives PUBLIC_URL from the published port, and passes passwords for Postgres and Redis', async () => {
    const { services } = await compose();
    const gateway = services.gateway as ComposeService;
    expect(gateway.ports).toEqual([`\${CALGATE_PORT:-8787}:8787`]);
    expect(gateway.environment?.PUBLIC_URL).toBe(`\${PUBLIC_URL:-http://localhost:\${CALGATE_PORT:-8787}}`);
    expect(gateway.environment?.REDIS_URL).toBe(
      `redis://:\${REDIS_PASSWORD:?set REDIS_PASSWORD in .env}@redis:6379`,
    );
    expect(services.redis?.command).toEqual(
      expect.arrayContaining(['--requirepass', `\${REDIS_PASSWORD:?set REDIS_PASSWORD in .env}`]),
    );
    expect(gateway.environment?.DATABASE_URL).toContain(`\${POSTGRES_PASSWORD:?`);
  });

  it('mounts the service-account key as a secret file and offers TLS through Caddy under a profile', async () => {
    const { services, secrets } = await compose();
    expect(secrets['google-service-account']?.file).toBe(
      `\${GOOGLE_SERVICE_ACCOUNT_KEY_PATH:-./deploy/no-service-account.json}`,
    );
    for (const name of ['gateway', 'worker']) {
      expect(services[name]?.secrets).toEqual(['google-service-account']);
      expect(services[name]?.environment?.GOOGLE_SERVICE_ACCOUNT_KEY_FILE).toBe(
        `\${GOOGLE_SERVICE_ACCOUNT_KEY_PATH:+/run/secrets/google-service-account}`,
      );
    }
    const caddy = services.caddy as ComposeService;
    expect(caddy.profiles).toEqual(['tls']);
    expect(caddy.volumes).toContain('./deploy/Caddyfile:/etc/caddy/Caddyfile:ro');
    const caddyfile = await read('deploy/Caddyfile');
    expect(caddyfile).toMatch(/^\{\$CALGATE_DOMAIN\} \{$/m);
    expect(caddyfile).toContain('reverse_proxy gateway:8787');
    await access(`${ROOT}deploy/no-service-account.json`);
  });

  it('names in .env.example every variable the compose file reads', async () => {
    const text = await read('docker-compose.yml');
    const example = await read('.env.example');
    const used = new Set([...text.matchAll(/\$\{([A-Z_]+)/g)].map((match) => match[1] as string));
    expect([...used].filter((name) => !new RegExp(`^(# )?${name}=`, 'm').test(example))).toEqual([]);
  });
});
