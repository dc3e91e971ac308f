// A secret the API shows once (an API key's, a confidential client's): displayed with a copy
// button until the user says it is stored.
import { useState } from 'preact/hooks';

export function SecretOnce({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <section class="secret" aria-label="New secret">
      <p>
        The secret of <strong>{name}</strong>. Store it now: it is not shown again.
      </p>
      <p>
        <code data-testid="secret">{secret}</code>
      </p>
      <button
        type="button"
        onClick={() =>
          void navigator.clipboard.writeText(secret).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        Copy the secret
      </button>{' '}
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
      <p role="status">{copied ? 'Copied.' : ''}</p>
    </section>
  );
}
