// Plain text into candidate memories: paragraphs gathered into pieces of about 2,000 characters
// (a memory a search can match as a whole), keyed by the file's path and the piece's number.
import { baseName, type Candidate, entitiesOf, fitKey, MAX_TITLE, pathKey } from './candidate.ts';

const PIECE = 2_000;

/** A paragraph longer than a piece, cut at line boundaries (or anywhere, for a line that long). */
function cut(para: string): string[] {
  const out: string[] = [];
  for (let rest = para; rest.length > 0; ) {
    if (rest.length <= PIECE) return [...out, rest];
    const at = rest.lastIndexOf('\n', PIECE);
    const end = at > 0 ? at : PIECE;
    out.push(rest.slice(0, end).trim());
    rest = rest.slice(end).trim();
  }
  return out;
}

function piecesOf(text: string): string[] {
  const pieces: string[] = [];
  let current = '';
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .flatMap(cut);
  for (const p of paragraphs) {
    if (current && current.length + p.length + 2 > PIECE) {
      pieces.push(current);
      current = '';
    }
    current += (current ? '\n\n' : '') + p;
  }
  if (current) pieces.push(current);
  return pieces;
}

/** The candidates of one text file at `path`. */
export function textCandidates(path: string, text: string): Candidate[] {
  const pieces = piecesOf(text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n'));
  const base = pathKey(path);
  const name = baseName(path);
  return pieces.map((content, i) => {
    const firstLine = content.split('\n', 1)[0].slice(0, 120);
    const title = (pieces.length > 1 ? `${name} (${i + 1}/${pieces.length}): ${firstLine}` : `${name}: ${firstLine}`).slice(0, MAX_TITLE);
    return {
      key: fitKey(pieces.length > 1 ? `${base}/part-${i + 1}` : base),
      title,
      content,
      tags: [],
      entities: entitiesOf(content),
      origin: pieces.length > 1 ? `${path} part ${i + 1}` : path,
    };
  });
}
