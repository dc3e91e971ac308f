// A button that puts a text on the clipboard (a secret shown once, a configuration snippet) and
// says so; the browser may refuse (no permission), and the status says that too.
import { useState } from 'preact/hooks';

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [said, setSaid] = useState('');
  const copy = () =>
    void navigator.clipboard.writeText(text).then(
      () => setSaid('Copied.'),
      () => setSaid('The browser did not allow copying: select the text and copy it.'),
    );
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>{' '}
      <span role="status">{said}</span>
    </>
  );
}
