import { SMTPServer } from 'smtp-server';

/** One message as the SMTP receiver got it: envelope addresses and the decoded text body. */
export interface ReceivedMail {
  from: string;
  to: string;
  subject: string;
  body: string;
}

export interface Mailbox {
  port: number;
  /** The next message (waits up to 10 s). */
  next(): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parse(raw: string, from: string, to: string): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const rest = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const body = /quoted-printable/i.test(header('Content-Transfer-Encoding'))
    ? decodeQuotedPrintable(rest)
    : /base64/i.test(header('Content-Transfer-Encoding'))
      ? Buffer.from(rest, 'base64').toString('utf8')
      : rest;
  return { from, to, subject: header('Subject'), body };
}

/**
 * A real SMTP server on loopback (the smtp-server package) that requires AUTH PLAIN/LOGIN with
 * the given credentials and keeps what it receives.
 */
export async function startMailbox(credentials: { user: string; password: string }): Promise<Mailbox> {
  const received: ReceivedMail[] = [];
  const waiting: ((mail: ReceivedMail) => void)[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.user && auth.password === credentials.password) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
        const to = session.envelope.rcptTo.map((r) => r.address).join(',');
        const mail = parse(Buffer.concat(chunks).toString('utf8'), from, to);
        const waiter = waiting.shift();
        if (waiter === undefined) {
          received.push(mail);
        } else {
          waiter(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    next() {
      const ready = received.shift();
      if (ready !== undefined) {
        return Promise.resolve(ready);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no mail arrived within 10 s')), 10_000);
        waiting.push((mail) => {
          clearTimeout(timer);
          resolve(mail);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
