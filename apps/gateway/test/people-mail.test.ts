import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenantWithOwner, passwordResetLink } from '../src/cli/people.ts';
import { type Browser, call, signIn, uniqueEmail } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';
import { type Mailbox, startMailbox } from './mailbox.ts';

const PASSWORD = 'correct horse battery';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

describe('people: invitation and reset mail over SMTP', () => {
  let gw: TestGateway;
  let owner: Browser;
  let ownerEmail: string;
  let mailbox: Mailbox;
  let mailed: TestGateway;
  const SMTP_PASSWORD = `smtp-${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    gw = await startTestGateway({ ENCRYPTION_KEY });
    ownerEmail = uniqueEmail('owner');
    const signup = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email: ownerEmail, password: PASSWORD },
    });
    expect(signup.status).toBe(201);
    owner = await signIn(gw, ownerEmail, PASSWORD);
    mailbox = await startMailbox({ user: 'calgate', password: SMTP_PASSWORD });
    mailed = await startTestGateway(
      {
        ENCRYPTION_KEY,
        SMTP_URL: `smtp://calgate:${SMTP_PASSWORD}@127.0.0.1:${mailbox.port}`,
        SMTP_FROM: 'Calgate <calgate@example.test>',
      },
      { db: gw.db },
    );
  });

  afterAll(async () => {
    await mailed?.stop();
    await mailbox?.close();
    await gw?.stop();
  });

  it('e-mails invitations and reset links; the SMTP password never shows', async () => {
    const email = uniqueEmail('mailed');
    const invited = await call(mailed, 'POST', '/api/v1/invitations', {
      as: owner,
      body: { email, role: 'member' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body.sent).toBe(true);
    const message = await mailbox.next();
    expect(message.to).toBe(email);
    expect(message.from).toBe('calgate@example.test');
    expect(message.body).toContain(invited.body.link);

    const reset = await createTenantWithOwner(
      mailed.runtime.db,
      {
        publicUrl: 'http://calgate.test',
        smtp: { url: `smtp://calgate:${SMTP_PASSWORD}@127.0.0.1:${mailbox.port}`, from: 'c@example.test' },
      },
      { name: 'Initech', ownerEmail: uniqueEmail('initech') },
    );
    expect(reset.sent).toBe(true);
    expect((await mailbox.next()).body).toContain(reset.link);

    const link = await passwordResetLink(
      mailed.runtime.db,
      {
        publicUrl: 'http://calgate.test',
        smtp: { url: `smtp://calgate:${SMTP_PASSWORD}@127.0.0.1:${mailbox.port}`, from: 'c@example.test' },
      },
      ownerEmail,
    );
    expect(link.sent).toBe(true);
    expect((await mailbox.next()).body).toContain(link.link);

    // A wrong password: the failure names the server, never a password.
    const wrong = await passwordResetLink(
      mailed.runtime.db,
      {
        publicUrl: 'http://calgate.test',
        smtp: { url: `smtp://calgate:${SMTP_PASSWORD}x@127.0.0.1:${mailbox.port}`, from: 'c@example.test' },
      },
      ownerEmail,
    );
    expect(wrong.sent).toBe(false);
    expect(wrong.note).toContain(`smtp://calgate@127.0.0.1:${mailbox.port}`);
    expect(wrong.note).not.toContain(SMTP_PASSWORD);
    expect(mailed.logs.join('')).not.toContain(SMTP_PASSWORD);
  });
});
