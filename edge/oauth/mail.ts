// Outgoing e-mail. With SMTP_URL set, messages go through that server (nodemailer); without it,
// each message is appended to `<DATA_DIR>/outbox.jsonl` and logged, so a single-machine install
// works without a mail server.
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from '../../services/common/log.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  readonly kind: 'smtp' | 'outbox';
}

export interface MailerOptions {
  smtpUrl?: string;
  from: string;
  dataDir: string;
  logger: Logger;
}

export function outboxPath(dataDir: string): string {
  return path.join(dataDir, 'outbox.jsonl');
}

export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    return {
      kind: 'smtp',
      async send(message) {
        await transport.sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text });
      },
    };
  }
  const file = outboxPath(options.dataDir);
  return {
    kind: 'outbox',
    async send(message) {
      const line = { at: new Date().toISOString(), from: options.from, ...message };
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.appendFile(file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
      options.logger.info(
        { outbox: file, to: message.to, subject: message.subject, text: message.text },
        'mail written to the outbox (no SMTP_URL)',
      );
    },
  };
}
