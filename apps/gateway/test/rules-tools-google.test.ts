import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'calgate-rules.apps.example', clientSecret: 'rules-secret' };
const ANN = 'ann@example.com';
const BOB = 'bob@example.com';
const DAY = '2026-11-24';
const berlin = (time: string) => ({ dateTime: `${DAY}T${time}:00+01:00`, timeZone: 'Europe/Berlin' });

type Out = Record<string, unknown>;

describe('rules tools on Google calendars (emulator): per-occurrence rules, filing, timesheet, grants', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let agent: Client;
  let ann: string;
  let bob: string;

  const call = async (name: string, args: Out): Promise<Out> => {
    const result = await agent.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result.structuredContent as Out;
  };

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [
        {
          email: ANN,
          timeZone: 'Europe/Berlin',
          events: [
            {
              summary: 'Acme weekly',
              start: berlin('09:00'),
              end: berlin('10:00'),
              recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
              attendees: [{ email: ANN, self: true, responseStatus: 'accepted' }, { email: 'pat@acme.com' }],
            },
            {
              summary: 'Globex review',
              start: berlin('11:00'),
              end: berlin('12:30'),
              attendees: [
                { email: ANN, self: true, responseStatus: 'accepted' },
                { email: 'lee@globex.com' },
              ],
            },
            {
              summary: 'Acme pitch (declined)',
              start: berlin('14:00'),
              end: berlin('15:00'),
              attendees: [{ email: ANN, self: true, responseStatus: 'declined' }, { email: 'pat@acme.com' }],
            },
          ],
        },
        {
          email: BOB,
          timeZone: 'Europe/Berlin',
          events: [
            {
              summary: 'Acme secret merger',
              start: berlin('16:00'),
              end: berlin('17:00'),
              attendees: [{ email: 'ceo@acme.com' }],
            },
          ],
        },
      ],
    });
    gw = await startTestGateway({ ...emulator.env, ...HIGH_RATE_LIMITS });
    const tenant = await gw.seedTenant('Acme consulting');
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, { toolsets: ['calendar', 'rules'] });
    ann = await connectGoogleAccount(gw, emulator, tenant, ANN, 'write');
    // Bob's calendar is the tenant's, but this key has no grant on it.
    const other = await gw.runtime.keys.create(tenant.tenantId, { name: 'bob-only' });
    bob = await connectGoogleAccount(
      gw,
      emulator,
      { tenantId: tenant.tenantId, keyId: other.key.id },
      BOB,
      'read',
    );
    agent = await connectClient(gw.mcpUrl, tenant.secret);
  });

  afterAll(async () => {
    await agent?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('files each occurrence of a Google series, leaves declined time out, and never reads an ungranted calendar', async () => {
    const acme = (
      (await call('create_project', { name: 'Acme', client: 'Acme Inc.' })).project as { id: string }
    ).id;
    const globex = ((await call('create_project', { name: 'Globex' })).project as { id: string }).id;
    const range = { timeMin: DAY, timeMax: '2026-11-26', timeZone: 'Europe/Berlin' };

    const preview = await call('preview_rule', { query: 'domain:acme.com', ...range });
    // Three occurrences of the series and the declined pitch; Bob's "secret merger" never.
    expect(preview.matchCount).toBe(4);
    const matches = preview.matches as { calendarId: string; summary: string; start: { dateTime: string } }[];
    expect(new Set(matches.map((match) => match.calendarId))).toEqual(new Set([ann]));
    expect(JSON.stringify(preview)).not.toMatch(/secret merger|ceo@acme\.com/);
    expect(matches.map((match) => match.start.dateTime).sort()[0]).toBe(`${DAY}T09:00:00+01:00`);

    const refused = await agent.callTool({
      name: 'preview_rule',
      arguments: { query: 'domain:acme.com', calendarIds: [bob], ...range },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/was not found/);

    await call('create_rule', { query: 'domain:acme.com', projectId: acme });
    await call('create_rule', { query: 'domain:globex.com', projectId: globex });
    const applied = await call('apply_rules', range);
    expect(applied).toMatchObject({ classified: 5, pending: 0 });

    const summary = await call('get_time_summary', { ...range, groupBy: 'project' });
    const hours = Object.fromEntries(
      (summary.lines as { project: string; hours: number }[]).map((line) => [line.project, line.hours]),
    );
    // 3 × 1 h of the series (the declined pitch is left out), 1.5 h of Globex.
    expect(hours).toEqual({ Acme: 3, Globex: 1.5 });
    expect(JSON.stringify(summary)).not.toMatch(/merger/);
  });

  it("classify_event with a Google series' id files each of its occurrences in the window, by hand", async () => {
    const { projects } = (await call('list_projects', {})) as { projects: { id: string; name: string }[] };
    const globex = projects.find((project) => project.name === 'Globex')?.id;
    const range = { timeMin: DAY, timeMax: '2026-11-26', timeZone: 'Europe/Berlin' };
    const instances = (await call('preview_rule', { query: 'title:weekly', ...range })).matches as {
      eventId: string;
    }[];
    expect(instances).toHaveLength(3);
    const { event } = (await call('get_event', { calendarId: ann, eventId: instances[0]?.eventId })) as {
      event: { recurringEventId: string };
    };
    const seriesId = event.recurringEventId;
    expect(seriesId).toBeTruthy();

    const refused = await agent.callTool({
      name: 'classify_event',
      arguments: { calendarId: ann, eventId: seriesId, projectId: globex },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('give timeMin and timeMax');

    const filed = await call('classify_event', {
      calendarId: ann,
      eventId: seriesId,
      projectId: globex,
      ...range,
    });
    expect(filed).toMatchObject({ eventId: seriesId, projectId: globex, filed: 3 });
    const preview = await call('preview_rule', { query: 'title:weekly', projectId: globex, ...range });
    expect(preview.conflicts).toEqual([]);
    const summary = await call('get_time_summary', { ...range, groupBy: 'project' });
    const hours = Object.fromEntries(
      (summary.lines as { project: string; hours: number }[]).map((line) => [line.project, line.hours]),
    );
    expect(hours).toEqual({ Globex: 4.5 });
  });
});
