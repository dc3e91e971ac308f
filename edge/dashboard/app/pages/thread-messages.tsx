// An investigation's messages, each with the files and pages it refers to (attachments by
// reference: a URI, its media type, a title, the size when known; only http and https URIs are
// links), and a new message from members, with attachments of their own.
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

interface Attachment {
  uri: string;
  media_type: string;
  title: string;
  size_bytes: number | null;
}

interface Message {
  id: string;
  role: 'user' | 'agent' | 'tool';
  content: string;
  author: string;
  attachments: Attachment[];
  created_at: string | null;
}

interface AttachmentDraft {
  uri: string;
  media_type: string;
  title: string;
  size: string;
}

const NEW_ATTACHMENT: AttachmentDraft = { uri: '', media_type: '', title: '', size: '' };

function size(bytes: number | null): string {
  if (bytes === null) return '';
  if (bytes < 1024) return `, ${bytes} bytes`;
  return bytes < 1024 * 1024 ? `, ${(bytes / 1024).toFixed(1)} KB` : `, ${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function Attachments({ items }: { items: Attachment[] }) {
  if (items.length === 0) return null;
  return (
    <ul class="attachments" aria-label="Attachments">
      {items.map((a) => {
        const name = a.title || a.uri;
        return (
          <li key={a.uri}>
            {/^https?:\/\//i.test(a.uri) ? (
              <a href={a.uri} rel="noopener noreferrer" target="_blank">
                {name}
              </a>
            ) : (
              <strong>{name}</strong>
            )}{' '}
            ({a.media_type}
            {size(a.size_bytes)}){a.title && <code> {a.uri}</code>}
          </li>
        );
      })}
    </ul>
  );
}

function AttachmentFields({ list, onChange }: { list: AttachmentDraft[]; onChange: (l: AttachmentDraft[]) => void }) {
  const set = (i: number, patch: Partial<AttachmentDraft>) => onChange(list.map((a, j) => (j === i ? { ...a, ...patch } : a)));
  return (
    <>
      {list.map((a, i) => (
        // The rows have no identity but their place.
        <fieldset key={i} class="group">
          <legend>Attachment {i + 1}</legend>
          <label>
            URI of attachment {i + 1}
            <input
              required
              maxLength={2000}
              value={a.uri}
              onInput={(e) => set(i, { uri: e.currentTarget.value })}
              placeholder="https://…"
            />
          </label>
          <label>
            Media type of attachment {i + 1}
            <input required value={a.media_type} onInput={(e) => set(i, { media_type: e.currentTarget.value })} placeholder="text/plain" />
          </label>
          <label>
            Title of attachment {i + 1}
            <input maxLength={200} value={a.title} onInput={(e) => set(i, { title: e.currentTarget.value })} />
          </label>
          <label>
            Size in bytes of attachment {i + 1} (if known)
            <input type="number" min={0} value={a.size} onInput={(e) => set(i, { size: e.currentTarget.value })} />
          </label>
          <button type="button" onClick={() => onChange(list.filter((_, j) => j !== i))}>
            Remove attachment {i + 1}
          </button>
        </fieldset>
      ))}
      {list.length < 20 && (
        <button type="button" onClick={() => onChange([...list, NEW_ATTACHMENT])}>
          Add an attachment
        </button>
      )}
    </>
  );
}

const attachmentBody = (a: AttachmentDraft) => ({
  uri: a.uri.trim(),
  media_type: a.media_type.trim(),
  ...(a.title ? { title: a.title } : {}),
  ...(a.size ? { size_bytes: Number(a.size) } : {}),
});

export function Messages({ path, after }: { path: string; after: () => void }) {
  const { api, organization } = useSession();
  const messages = usePaged<Message>(`${path}/messages`, 'messages');
  const [content, setContent] = useState('');
  const [attachments, setAttachments] = useState<AttachmentDraft[]>([]);
  const action = useAction(() => {
    messages.reload();
    after();
  });
  const post = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.call('POST', `${path}/messages`, { body: { content, attachments: attachments.map(attachmentBody) } });
      setContent('');
      setAttachments([]);
      return 'Message posted.';
    });
  };
  return (
    <section aria-labelledby="messages-title">
      <h2 id="messages-title">Messages</h2>
      <ProblemAlert problem={messages.problem ?? action.problem} />
      {messages.items.map((m) => (
        <article key={m.id} class="message" aria-label={`${m.role} message`}>
          <p class="meta">
            {m.role} {m.author && <code>{m.author}</code>} · {when(m.created_at)}
          </p>
          <p class="content">{m.content}</p>
          <Attachments items={m.attachments ?? []} />
        </article>
      ))}
      <MoreButton paged={messages} label="More messages" />
      {can(organization.role, 'postThreadMessage') && (
        <form onSubmit={post} class="stacked-form">
          <label>
            New message
            <textarea required rows={3} value={content} onInput={(e) => setContent(e.currentTarget.value)} />
          </label>
          <AttachmentFields list={attachments} onChange={setAttachments} />
          <button type="submit">Post the message</button>
        </form>
      )}
      <p role="status">{action.notice}</p>
    </section>
  );
}
