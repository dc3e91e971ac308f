// A secret the API shows once (an API key's, a confidential client's): displayed with a copy
// button until the user says it is stored; `children` is what goes with it (how to use it).
import type { ComponentChildren } from 'preact';
import { CopyButton } from './copy-button.tsx';

export function SecretOnce({
  name,
  secret,
  onDone,
  children,
}: {
  name: string;
  secret: string;
  onDone: () => void;
  children?: ComponentChildren;
}) {
  return (
    <section class="secret" aria-label="New secret">
      <p>
        The secret of <strong>{name}</strong>. Store it now: it is not shown again.
      </p>
      <p>
        <code data-testid="secret">{secret}</code>
      </p>
      <p>
        <CopyButton text={secret} label="Copy the secret" />
      </p>
      {children}
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}
