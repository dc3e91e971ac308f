// A real SMTP server (smtp-server) on 127.0.0.1 for the tests that send mail: no TLS, no auth, and
// every message it accepts filed, as received, in one inbox. An inbox may be served by more than
// one server over a test's life (one that is down at first, then listens on the port the platform
// was given), so the inbox and its servers are made apart.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope's sender ('' when none). */
  from: string;
  /** The envelope's recipients. */
  to: string[];
  /** The message as sent: headers and body, still transfer-encoded. */
  raw: string;
}

export interface SmtpListener {
  port: number;
  /** The SMTP_URL that reaches it. */
  url: string;
  close(): Promise<void>;
}

export interface SmtpInbox {
  /** Every message received so far, in order. */
  mails: ReceivedMail[];
  /** Resolves with the next message received (call it before what sends it). */
  next(): Promise<ReceivedMail>;
  /** Starts a server filing into this inbox, on `port` (0 for any). */
  listen(port?: number): Promise<SmtpListener>;
}

export function createSmtpInbox(): SmtpInbox {
  const mails: ReceivedMail[] = [];
  let waiting: ((mail: ReceivedMail) => void)[] = [];
  const file = (mail: ReceivedMail) => {
    mails.push(mail);
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake(mail);
  };
  return {
    mails,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    async listen(port = 0) {
      const server = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onData(stream, session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            file({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              raw: Buffer.concat(chunks).toString('utf8'),
            });
            callback();
          });
        },
      });
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
      const bound = (server.server.address() as AddressInfo).port;
      return {
        port: bound,
        url: `smtp://127.0.0.1:${bound}`,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  };
}

/** The message as a mail client shows it for the links in it: quoted-printable soft line breaks joined, `=3D` read as `=`. */
export function readable(mail: ReceivedMail): string {
  return mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
}
