/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned) against
 * `calgate serve` as its own process on loopback, as an operator runs it, for both revisions
 * Calgate serves. Every scored server scenario of each revision runs, one suite process each; the
 * ones that call the suite's own fixture tools, prompts or resources (`test_simple_text`,
 * `test://static-text`, …), which a calendar gateway does not have, are listed below with the
 * reason. Every other scenario must pass, so a scenario a new suite adds fails this test until
 * Calgate passes it. The suite sends no Authorization header, so it talks to a small loopback
 * proxy that adds the key's bearer and forwards everything else (Host and Origin included).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiKeyRepository, TenancyRepository } from '@calgate/store';
import { createTestDatabase, freePort, redisUrl, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, HIGH_RATE_LIMITS, spawnGatewayProcess } from './harness.ts';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const SUITE = require.resolve('@modelcontextprotocol/conformance/dist/index.js');
const SUITE_VERSION = '0.2.0-alpha.12';

type Revision = '2025-11-25' | '2026-07-28';

const FIXTURE_TOOL = 'calls a fixture tool of the suite';
const FIXTURE_PROMPT = 'gets a fixture prompt of the suite';
const FIXTURE_RESOURCE = 'reads a fixture resource of the suite (test://…)';

/** Scenarios that exercise the suite's fixtures rather than the server under test, per revision. */
const NEEDS_FIXTURES: Record<Revision, Record<string, string>> = {
  '2025-11-25': {
    'tools-call-simple-text': `${FIXTURE_TOOL} (test_simple_text)`,
    'tools-call-image': `${FIXTURE_TOOL} (test_image_content)`,
    'tools-call-audio': `${FIXTURE_TOOL} (test_audio_content)`,
    'tools-call-embedded-resource': `${FIXTURE_TOOL} (test_embedded_resource)`,
    'tools-call-mixed-content': `${FIXTURE_TOOL} (test_multiple_content_types)`,
    'tools-call-with-logging': `${FIXTURE_TOOL} (test_tool_with_logging)`,
    'tools-call-error': `${FIXTURE_TOOL} (test_error_handling)`,
    'tools-call-with-progress': `${FIXTURE_TOOL} (test_tool_with_progress)`,
    'tools-call-sampling': `${FIXTURE_TOOL} (test_sampling)`,
    'tools-call-elicitation': `${FIXTURE_TOOL} (test_elicitation)`,
    'elicitation-sep1034-defaults': `${FIXTURE_TOOL} (test_elicitation_sep1034_defaults)`,
    'elicitation-sep1330-enums': `${FIXTURE_TOOL} (test_elicitation_sep1330_enums)`,
    'resources-read-text': `${FIXTURE_RESOURCE}`,
    'resources-read-binary': `${FIXTURE_RESOURCE}`,
    'resources-templates-read': `${FIXTURE_RESOURCE}`,
    'resources-subscribe':
      'subscribes to the fixture resource test://static-text; Calgate serves 2025-11-25 without sessions and offers resource updates through 2026-07-28 subscriptions/listen',
    'resources-unsubscribe':
      'unsubscribes from the fixture resource test://static-text (see resources-subscribe)',
    'prompts-get-simple': `${FIXTURE_PROMPT} (test_simple_prompt)`,
    'prompts-get-with-args': `${FIXTURE_PROMPT} (test_prompt_with_arguments)`,
    'prompts-get-embedded-resource': `${FIXTURE_PROMPT} (test_prompt_with_embedded_resource)`,
    'prompts-get-with-image': `${FIXTURE_PROMPT} (test_prompt_with_image)`,
  },
  '2026-07-28': {
    'tools-call-simple-text': `${FIXTURE_TOOL} (test_simple_text)`,
    'tools-call-image': `${FIXTURE_TOOL} (test_image_content)`,
    'tools-call-audio': `${FIXTURE_TOOL} (test_audio_content)`,
    'tools-call-embedded-resource': `${FIXTURE_TOOL} (test_embedded_resource)`,
    'tools-call-mixed-content': `${FIXTURE_TOOL} (test_multiple_content_types)`,
    'tools-call-error': `${FIXTURE_TOOL} (test_error_handling)`,
    'tools-call-with-progress': `${FIXTURE_TOOL} (test_tool_with_progress)`,
    'resources-read-text': `${FIXTURE_RESOURCE}`,
    'resources-read-binary': `${FIXTURE_RESOURCE}`,
    'resources-templates-read': `${FIXTURE_RESOURCE}`,
    'prompts-get-simple': `${FIXTURE_PROMPT} (test_simple_prompt)`,
    'prompts-get-with-args': `${FIXTURE_PROMPT} (test_prompt_with_arguments)`,
    'prompts-get-embedded-resource': `${FIXTURE_PROMPT} (test_prompt_with_embedded_resource)`,
    'prompts-get-with-image': `${FIXTURE_PROMPT} (test_prompt_with_image)`,
    'input-required-result-basic-elicitation': `${FIXTURE_TOOL} (test_input_required_result_elicitation)`,
    'input-required-result-basic-sampling': `${FIXTURE_TOOL} (test_input_required_result_sampling)`,
    'input-required-result-basic-list-roots': `${FIXTURE_TOOL} (test_input_required_result_list_roots)`,
    'input-required-result-request-state': `${FIXTURE_TOOL} (test_input_required_result_request_state)`,
    'input-required-result-multiple-input-requests': `${FIXTURE_TOOL} (test_input_required_result_multiple_inputs)`,
    'input-required-result-multi-round': `${FIXTURE_TOOL} (test_input_required_result_multi_round)`,
    'input-required-result-non-tool-request': `${FIXTURE_PROMPT} (test_input_required_result_prompt)`,
    'input-required-result-result-type': `${FIXTURE_TOOL} (test_input_required_result_elicitation)`,
    'input-required-result-tampered-state': `${FIXTURE_TOOL} (an input_required result with requestState from a fixture tool)`,
    'input-required-result-capability-check': `${FIXTURE_TOOL} (test_input_required_result_capabilities)`,
  },
};

/** Checks of otherwise applicable scenarios that call a fixture; every other check must pass. */
const FIXTURE_CHECKS: Record<Revision, Record<string, string>> = {
  '2025-11-25': {},
  '2026-07-28': {
    'server-stateless/sep-2575-server-rejects-undeclared-capability': `${FIXTURE_TOOL} (test_missing_capability)`,
    'server-stateless/sep-2575-missing-capability-http-400': `${FIXTURE_TOOL} (test_missing_capability)`,
    'server-stateless/sep-2575-http-server-no-independent-requests-on-stream': `${FIXTURE_TOOL} (test_streaming_elicitation)`,
    'server-stateless/sep-2575-server-no-log-without-loglevel': `${FIXTURE_TOOL} (test_logging_tool)`,
  },
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
}

/** The scored server scenarios of a revision, as the pinned suite lists them. */
async function scoredServerScenarios(revision: Revision): Promise<string[]> {
  const { stdout } = await run(process.execPath, [SUITE, 'list', '--server', '--requirements', revision]);
  const section = stdout.split('Server scenarios')[1]?.split(/\n\s*\n/)[0] ?? '';
  return [...section.matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1] as string);
}

/** A tenant with one API key, written to the database the gateway process serves. */
async function seedKey(db: TestDatabase): Promise<string> {
  const tenant = await new TenancyRepository(db.prisma).createTenant('Conformance');
  const { secret } = await new ApiKeyRepository(db.prisma).create(tenant.id, { name: 'conformance' });
  return secret;
}

describe('MCP conformance suite, every scored server scenario of both revisions', () => {
  let db: TestDatabase;
  let gateway: GatewayProcess;
  let proxy: Server;
  let proxyUrl: string;
  let output: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const secret = await seedKey(db);
    const port = await freePort();
    gateway = await spawnGatewayProcess({
      ...HIGH_RATE_LIMITS,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl(),
    });
    proxy = createServer((incoming, outgoing) => {
      const forwarded = request(
        {
          host: '127.0.0.1',
          port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, authorization: `Bearer ${secret}` },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      // A suite process that exits ends its streams at the gateway too.
      outgoing.on('close', () => forwarded.destroy());
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/mcp`;
    output = await mkdtemp(join(tmpdir(), 'calgate-conformance-'));
  });

  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await gateway?.stop();
    await db?.close();
    if (output !== undefined) {
      await rm(output, { recursive: true, force: true });
    }
  });

  it(`runs the pinned suite, ${SUITE_VERSION}`, async () => {
    const { version } = JSON.parse(await readFile(join(SUITE, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toBe(SUITE_VERSION);
  });

  /** The checks of one scenario, run in a suite process of its own (its streams end with it). */
  async function checksOf(revision: Revision, scenario: string): Promise<Check[]> {
    const dir = join(output, revision, scenario);
    await run(
      process.execPath,
      [SUITE, 'server', '--url', proxyUrl, '--scenario', scenario, '--spec-version', revision, '-o', dir],
      { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
    ).catch(() => undefined);
    const [saved] = await readdir(dir);
    if (saved === undefined) {
      throw new Error(`The suite saved no results for ${scenario} (${revision}).`);
    }
    return JSON.parse(await readFile(join(dir, saved, 'checks.json'), 'utf8')) as Check[];
  }

  for (const revision of ['2025-11-25', '2026-07-28'] as const) {
    it(`passes every scored server scenario of ${revision} that tests Calgate itself`, async () => {
      const scenarios = await scoredServerScenarios(revision);
      expect(scenarios.length).toBeGreaterThan(20);
      // A listed scenario the suite no longer has is a stale entry.
      for (const listed of Object.keys(NEEDS_FIXTURES[revision])) {
        expect(scenarios, `${listed} is listed as needing fixtures`).toContain(listed);
      }
      const applicable = scenarios.filter((scenario) => NEEDS_FIXTURES[revision][scenario] === undefined);
      const failures: string[] = [];
      let passed = 0;
      for (const scenario of applicable) {
        const checks = await checksOf(revision, scenario);
        const failed = checks.filter(
          (check) =>
            check.status === 'FAILURE' && FIXTURE_CHECKS[revision][`${scenario}/${check.id}`] === undefined,
        );
        if (checks.length === 0 || failed.length > 0) {
          failures.push(
            `${scenario}: ${failed.map((check) => `${check.id}: ${check.errorMessage ?? ''}`).join('; ') || 'no checks ran'}`,
          );
        } else {
          passed++;
        }
      }
      console.log(`MCP ${revision}: passed ${passed} / applicable ${applicable.length}`);
      expect(failures).toEqual([]);
    }, 900_000);
  }
});
