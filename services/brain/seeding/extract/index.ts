// A seeding source into candidate memories, by media type: Markdown, HTML, plain text, JSON Lines,
// or a zip of a docs folder holding those (by file extension). What is extracted is bounded: a zip
// may unpack to at most MAX_UNPACKED bytes in at most MAX_FILES files, and a source gives at
// most MAX_CANDIDATES candidates, so a small upload cannot become an unbounded job.
import { unzipSync } from 'fflate';
import { type Candidate, uniqueKeys } from './candidate.ts';
import { htmlCandidates } from './html.ts';
import { jsonlCandidates } from './jsonl.ts';
import { markdownCandidates } from './markdown.ts';
import { textCandidates } from './text.ts';

export type { Candidate } from './candidate.ts';

export const MAX_UNPACKED = 32 * 1024 * 1024;
export const MAX_FILES = 2_000;
export const MAX_CANDIDATES = 10_000;

/** The media types a source may have (application/x-ndjson is read as JSON Lines). */
export const SEEDING_MEDIA_TYPES = [
  'text/markdown',
  'text/plain',
  'text/html',
  'application/jsonl',
  'application/x-ndjson',
  'application/zip',
] as const;
type Kind = 'markdown' | 'html' | 'text' | 'jsonl';
const KINDS: Record<string, Kind> = {
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  txt: 'text',
  text: 'text',
  jsonl: 'jsonl',
  ndjson: 'jsonl',
};

const MEDIA_KINDS: Record<string, Kind> = { 'text/markdown': 'markdown', 'text/html': 'html', 'text/plain': 'text' };

/** The source cannot be read at all (a corrupt zip, too much inside): the run fails with this. */
export class SourceError extends Error {}

const decoder = new TextDecoder('utf-8');

function fileCandidates(kind: Kind, path: string, text: string): Candidate[] {
  if (kind === 'markdown') return markdownCandidates(path, text);
  if (kind === 'html') return htmlCandidates(path, text);
  if (kind === 'jsonl') return jsonlCandidates(path, text);
  return textCandidates(path, text);
}

/** The readable files of a zip, by path (folders, dot files and macOS metadata left out). */
function unzip(bytes: Uint8Array): Array<[string, Uint8Array]> {
  let unpacked = 0;
  let files = 0;
  let found: Record<string, Uint8Array>;
  try {
    found = unzipSync(bytes, {
      filter: (file) => {
        const name = file.name;
        if (name.endsWith('/') || name.startsWith('__MACOSX/') || name.split('/').some((part) => part.startsWith('.'))) return false;
        if (!KINDS[name.split('.').pop()?.toLowerCase() ?? '']) return false;
        unpacked += file.originalSize;
        files += 1;
        if (files > MAX_FILES) throw new SourceError(`the zip holds more than ${MAX_FILES} readable files`);
        if (unpacked > MAX_UNPACKED) throw new SourceError(`the zip unpacks to more than ${MAX_UNPACKED} bytes`);
        return true;
      },
    });
  } catch (err) {
    if (err instanceof SourceError) throw err;
    throw new SourceError(`the zip cannot be read: ${(err as Error).message}`);
  }
  return Object.entries(found).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The candidates of a source, in source order, with keys unique within it. */
export function extractCandidates(mediaType: string, filename: string, bytes: Uint8Array): Candidate[] {
  let out: Candidate[];
  if (mediaType === 'application/zip') {
    out = unzip(bytes).flatMap(([path, data]) => fileCandidates(KINDS[path.split('.').pop()!.toLowerCase()], path, decoder.decode(data)));
  } else {
    const kind: Kind = MEDIA_KINDS[mediaType] ?? 'jsonl';
    out = fileCandidates(kind, filename, decoder.decode(bytes));
  }
  if (out.length > MAX_CANDIDATES) throw new SourceError(`the source holds more than ${MAX_CANDIDATES} memories`);
  return uniqueKeys(out);
}
