import { CalgateError } from '@calgate/core';
import { type Database, PeopleRepository, TenancyRepository } from '@calgate/store';
import type { Config } from '../config.ts';
import { invitationMail, type Mailer, mailerFor, resetMail } from '../mail.ts';
import { type Io, print, UsageError, type Values } from './common.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function email(value: string | undefined, option: string): string {
  const normalised = value?.trim().toLowerCase() ?? '';
  if (!EMAIL.test(normalised)) {
    throw new UsageError(`${option} needs an email address, e.g. ${option} ann@example.com.`);
  }
  return normalised;
}

/** Sends a message when a mailer is set; the note to print about it. */
async function deliver(mailer: Mailer | undefined, send: (mailer: Mailer) => Promise<void>, to: string) {
  if (mailer === undefined) {
    return { sent: false, note: 'SMTP_URL is not set: pass the link on yourself.' };
  }
  try {
    await send(mailer);
    return { sent: true, note: `Sent to ${to}.` };
  } catch (error) {
    return {
      sent: false,
      note: `${error instanceof Error ? error.message : String(error)} Pass the link on yourself.`,
    };
  }
}

/** A new tenant and an invitation for its first owner: the link, e-mailed when SMTP is set. */
export async function createTenantWithOwner(
  db: Database,
  config: Pick<Config, 'publicUrl' | 'smtp'>,
  input: { name: string; ownerEmail: string },
  mailer: Mailer | undefined = mailerFor(config.smtp),
) {
  const tenant = await new TenancyRepository(db.prisma).createTenant(input.name);
  const created = await new PeopleRepository(db).invite({
    tenantId: tenant.id,
    email: input.ownerEmail,
    role: 'owner',
    invitedBy: null,
  });
  if (!created.ok) {
    throw new CalgateError(
      'conflict',
      `${input.ownerEmail} already signs in to Calgate (emails are unique per install); tenant ${tenant.id} was created without an owner invitation.`,
    );
  }
  const link = `${config.publicUrl}/invite?token=${created.token}`;
  const mail = await deliver(
    mailer,
    (m) => m.send(invitationMail({ to: input.ownerEmail, tenantName: tenant.name, role: 'owner', link })),
    input.ownerEmail,
  );
  return { tenant: { id: tenant.id, name: tenant.name }, invitation: created.invitation, link, ...mail };
}

/** A one-hour, one-time password-reset link for the user with this email; e-mailed when SMTP is set. */
export async function passwordResetLink(
  db: Database,
  config: Pick<Config, 'publicUrl' | 'smtp'>,
  address: string,
  mailer: Mailer | undefined = mailerFor(config.smtp),
) {
  const reset = await new PeopleRepository(db).createPasswordReset(address);
  if (reset === null) {
    throw new CalgateError('not_found', `No Calgate user signs in with ${address}.`);
  }
  const link = `${config.publicUrl}/reset?token=${reset.token}`;
  const mail = await deliver(mailer, (m) => m.send(resetMail({ to: address, link })), address);
  return { userId: reset.userId, link, ...mail };
}

/** `calgate tenant create --owner-email E` and `calgate user reset-password --email E`. */
export async function peopleCommand(db: Database, config: Config, io: Io, command: string, values: Values) {
  if (command === 'tenant create') {
    const name = values.name?.trim() ?? '';
    if (name === '') {
      throw new UsageError('--name is required.');
    }
    const result = await createTenantWithOwner(db, config, {
      name,
      ownerEmail: email(values['owner-email'], '--owner-email'),
    });
    print(
      io,
      values.json,
      {
        id: result.tenant.id,
        name: result.tenant.name,
        invitationId: result.invitation.id,
        link: result.link,
        sent: result.sent,
      },
      `Created tenant ${result.tenant.id} (${result.tenant.name}).\nOwner invitation for ${result.invitation.email} (valid 7 days, works once):\n${result.link}\n${result.note}`,
    );
    return;
  }
  const address = email(values.email, '--email');
  const result = await passwordResetLink(db, config, address);
  print(
    io,
    values.json,
    { userId: result.userId, link: result.link, sent: result.sent },
    `Password reset link for ${address} (valid 1 hour, works once; using it signs them out everywhere):\n${result.link}\n${result.note}`,
  );
}
