// The page patterns every screen shares: a problem shown as the API wrote it, a list read page
// by page with the API's cursors, and loading one resource.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiProblem, type ProblemDocument } from './api.ts';
import { useSession } from './session.tsx';

export function toProblem(err: unknown): ProblemDocument {
  if (err instanceof ApiProblem) return err.problem;
  return { type: 'about:blank', title: 'Something went wrong', status: 0, detail: err instanceof Error ? err.message : String(err) };
}

/** An RFC 9457 problem, readably: title and status, the detail, each invalid field, the type. */
export function ProblemAlert({ problem }: { problem: ProblemDocument | undefined }) {
  if (!problem) return null;
  return (
    <div class="problem" role="alert">
      <p>
        <strong>{problem.title}</strong>
        {problem.status ? ` (${problem.status})` : ''}
      </p>
      {problem.detail && <p>{problem.detail}</p>}
      {problem.errors && problem.errors.length > 0 && (
        <ul>
          {problem.errors.map((e) => (
            <li key={e.loc.join('.')}>
              <code>{e.loc.join('.')}</code>: {e.msg}
            </li>
          ))}
        </ul>
      )}
      {problem.type !== 'about:blank' && <p class="problem-type">{problem.type}</p>}
    </div>
  );
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Mindgate dashboard`;
  }, [title]);
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      {children}
    </section>
  );
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export interface Paged<T> {
  items: T[];
  hasMore: boolean;
  loading: boolean;
  problem?: ProblemDocument;
  loadMore(): void;
  reload(): void;
}

/**
 * A list of `path`, `field` in each page, `next_page_token` passed back until null; read again
 * from its first page whenever `version` changes (after a change made elsewhere on the screen).
 */
export function usePaged<T>(path: string | null, field: string, version = 0): Paged<T> {
  const { api } = useSession();
  const [items, setItems] = useState<T[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [problem, setProblem] = useState<ProblemDocument>();
  const fetchPage = useCallback(
    async (token: string | null, append: boolean) => {
      if (!path) return;
      setLoading(true);
      setProblem(undefined);
      try {
        const sep = path.includes('?') ? '&' : '?';
        const { data } = await api.call<Record<string, unknown>>(
          'GET',
          `${path}${token ? `${sep}page_token=${encodeURIComponent(token)}` : ''}`,
        );
        const page = (data[field] ?? []) as T[];
        setItems((old) => (append ? [...old, ...page] : page));
        setNext((data.next_page_token as string | null) ?? null);
      } catch (err) {
        setProblem(toProblem(err));
      } finally {
        setLoading(false);
      }
    },
    [api, path, field],
  );
  // `version` is not read: its change is the signal to read the list again.
  useEffect(() => {
    void fetchPage(null, false);
  }, [fetchPage, version]);
  return {
    items,
    hasMore: next !== null,
    loading,
    problem,
    loadMore: () => void fetchPage(next, true),
    reload: () => void fetchPage(null, false),
  };
}

/** One resource at `path`, again whenever `version` changes. */
export function useResource<T>(path: string | null, version = 0): { data?: T; etag: string | null; problem?: ProblemDocument } {
  const { api } = useSession();
  const [state, setState] = useState<{ data?: T; etag: string | null; problem?: ProblemDocument }>({ etag: null });
  useEffect(() => {
    if (!path) return;
    api.call<T>('GET', path).then(
      ({ data, etag }) => setState({ data, etag }),
      (err) => setState({ etag: null, problem: toProblem(err) }),
    );
  }, [api, path, version]);
  return state;
}

export function MoreButton({ paged, label }: { paged: Paged<unknown>; label: string }) {
  if (!paged.hasMore) return null;
  return (
    <button type="button" onClick={paged.loadMore} disabled={paged.loading}>
      {paged.loading ? 'Loading…' : label}
    </button>
  );
}

/** Runs an action after the user confirms it (destructive actions are always confirmed). */
export function confirmed(question: string): boolean {
  return window.confirm(question);
}

export interface Action {
  problem?: ProblemDocument;
  notice: string;
  busy: boolean;
  /** Runs `what`; its answer is the notice, its failure the problem; `after` runs on success. */
  run(what: () => Promise<string>): Promise<void>;
}

/** A change made from a screen: one at a time, its outcome announced (role="status") or shown as a problem. */
export function useAction(after: () => void): Action {
  const [problem, setProblem] = useState<ProblemDocument>();
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  return {
    problem,
    notice,
    busy,
    async run(what) {
      setProblem(undefined);
      setNotice('');
      setBusy(true);
      try {
        setNotice(await what());
        after();
      } catch (err) {
        setProblem(toProblem(err));
      } finally {
        setBusy(false);
      }
    },
  };
}
