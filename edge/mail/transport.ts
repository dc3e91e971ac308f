// Where a message is delivered: with SMTP_URL, that server (nodemailer); without it, a line of
// `<DATA_DIR>/outbox.jsonl` (private to the service user), so a single-machine install works
// without a mail server. Messages carry single-use links, so their text is never logged: the
// outbox file is the mailbox. The queue (queue.ts) decides when to deliver and retries.
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared/index.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface MailTransport {
  readonly kind: 'smtp' | 'outbox';
  /** Delivers the message, or throws (the queue retries it). */
  deliver(message: MailMessage): Promise<void>;
}

export interface MailTransportOptions {
  smtpUrl?: string;
  from: string;
  dataDir: string;
}

export function outboxPath(dataDir: string): string {
  return path.join(dataDir, 'outbox.jsonl');
}

// Short enough that a sign-up page waiting on a first attempt answers in seconds when the server
// is down; nodemailer's defaults wait up to two minutes.
const SMTP_TIMEOUTS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 15_000 };

export function createMailTransport(options: MailTransportOptions): MailTransport {
  if (options.smtpUrl) {
    // Given a URL, createTransport would drop every other option: the URL is parsed here instead.
    const transport = nodemailer.createTransport({ ...parseConnectionUrl(options.smtpUrl), ...SMTP_TIMEOUTS });
    return {
      kind: 'smtp',
      async deliver(message) {
        await transport.sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text });
      },
    };
  }
  const file = outboxPath(options.dataDir);
  return {
    kind: 'outbox',
    async deliver(message) {
      const line = { at: new Date().toISOString(), from: options.from, ...message };
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.appendFile(file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    },
  };
}
