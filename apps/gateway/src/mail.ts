import type { Transporter } from 'nodemailer';

/** One plain-text message. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Outgoing mail for invitations and password resets. Without SMTP_URL there is none, and links are shown instead. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** The SMTP URL without its password, for messages: smtp://user@host:port. */
export function redactSmtpUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return 'the SMTP server';
  }
}

/**
 * Mail through an SMTP server (smtp:// with STARTTLS when offered, smtps:// for implicit TLS),
 * credentials in the URL. Failures become errors that name the server but never its password:
 * nodemailer's own errors may quote the URL or the AUTH exchange, so they are not passed on.
 */
export class SmtpMailer implements Mailer {
  readonly #url: string;
  readonly #from: string;
  readonly #server: string;
  /** Made on the first message: nodemailer (~660 KB of modules) loads only in a gateway that mails. */
  #transport: Promise<Transporter> | undefined;

  constructor(options: { url: string; from: string }) {
    this.#url = options.url;
    this.#from = options.from;
    this.#server = redactSmtpUrl(options.url);
  }

  async send(message: MailMessage): Promise<void> {
    try {
      this.#transport ??= import('nodemailer').then(({ createTransport }) => createTransport(this.#url));
      await (await this.#transport).sendMail({ from: this.#from, ...message });
    } catch (error) {
      const code =
        typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'unknown';
      throw new Error(`Sending mail through ${this.#server} failed (${code}).`);
    }
  }

  close(): void {
    void this.#transport?.then(
      (transport) => transport.close(),
      () => {},
    );
  }
}

/** The mailer for SMTP_URL/SMTP_FROM, or undefined when SMTP_URL is unset. */
export function mailerFor(smtp: { url: string | undefined; from: string }): SmtpMailer | undefined {
  return smtp.url === undefined ? undefined : new SmtpMailer({ url: smtp.url, from: smtp.from });
}

/** The invitation e-mail. */
export function invitationMail(input: {
  to: string;
  tenantName: string;
  role: string;
  link: string;
}): MailMessage {
  return {
    to: input.to,
    subject: `You are invited to ${input.tenantName} on Calgate`,
    text: `You have been invited to join ${input.tenantName} on Calgate as ${input.role}.\n\nSet your password here (the link works once, for 7 days):\n${input.link}\n\nIf you did not expect this, ignore this message.\n`,
  };
}

/** The password-reset e-mail. */
export function resetMail(input: { to: string; link: string }): MailMessage {
  return {
    to: input.to,
    subject: 'Reset your Calgate password',
    text: `Set a new Calgate password here (the link works once, for 1 hour):\n${input.link}\n\nSetting it signs you out everywhere else. If you did not ask for this, ignore this message.\n`,
  };
}
