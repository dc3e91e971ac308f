// Settings of outgoing mail (EdgeConfig.mail): where it goes, and how the queue retries.
import { ConfigError, readInt, readString, type Env } from '../../services/common/config.ts';

export interface MailConfig {
  /** smtp:// or smtps:// URL; when unset, mail goes to `<DATA_DIR>/outbox.jsonl`. */
  smtpUrl?: string;
  from: string;
  /** Delay before the first retry of a message that could not be delivered; doubled each attempt, up to an hour. */
  retrySeconds: number;
  /** Delivery attempts before a message is given up (status `failed`). */
  maxAttempts: number;
}

export function readMailConfig(env: Env): MailConfig {
  const smtpUrl = readString(env, 'SMTP_URL');
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL', 'expected an smtp:// or smtps:// URL');
  }
  return {
    smtpUrl,
    from: readString(env, 'MAIL_FROM', 'Mindgate <no-reply@localhost>'),
    retrySeconds: readInt(env, 'MAIL_RETRY_SECONDS', 30, { min: 1, max: 3_600 }),
    maxAttempts: readInt(env, 'MAIL_MAX_ATTEMPTS', 12, { min: 1, max: 100 }),
  };
}
