// Markdown into candidate memories: one per section. The document is read with `marked`'s lexer;
// a heading of level 1-3 starts a section, whose text is everything up to the next such heading
// (deeper headings stay inside it). A section's key is the file's path and its heading
// (`runbooks/deploy/rollback`), its title the heading path under the document's title
// ("Alerts › Paging"; the document's title for the text before its first section). YAML front
// matter may give `title` and `tags`.
import { marked, type Token } from 'marked';
import { parse as parseYaml } from 'yaml';
import { baseName, type Candidate, entitiesOf, fitKey, MAX_TITLE, pathKey, slug, splitLong } from './candidate.ts';

const SECTION_DEPTH = 3;

interface FrontMatter {
  title?: string;
  tags: string[];
  body: string;
}

function frontMatter(text: string): FrontMatter {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { tags: [], body: text };
  let data: unknown;
  try {
    data = parseYaml(match[1]);
  } catch {
    return { tags: [], body: text.slice(match[0].length) };
  }
  const fields = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  const tags = Array.isArray(fields.tags) ? fields.tags.filter((t): t is string => typeof t === 'string').slice(0, 8) : [];
  const title = typeof fields.title === 'string' ? fields.title : undefined;
  return { title, tags: tags.map((t) => t.slice(0, 64)), body: text.slice(match[0].length) };
}

interface Section {
  headings: string[];
  raw: string;
}

/** Plain text of a heading's inline Markdown (`**x**` → x). */
function headingText(token: Token): string {
  const text = 'text' in token ? String(token.text) : '';
  return text
    .replace(/[*_`~]/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim();
}

function sectionsOf(body: string): Section[] {
  const sections: Section[] = [{ headings: [], raw: '' }];
  const path: string[] = [];
  for (const token of marked.lexer(body)) {
    if (token.type === 'heading' && token.depth <= SECTION_DEPTH) {
      path.length = Math.min(path.length, token.depth - 1);
      while (path.length < token.depth - 1) path.push('');
      path.push(headingText(token));
      sections.push({ headings: path.filter(Boolean), raw: '' });
      continue;
    }
    sections[sections.length - 1].raw += token.raw;
  }
  return sections.filter((s) => s.raw.trim() !== '');
}

/** The candidates of one Markdown file at `path` (its path in a zip, or the upload's name). */
export function markdownCandidates(path: string, text: string): Candidate[] {
  const { title: metaTitle, tags, body } = frontMatter(text.replace(/^\uFEFF/, ''));
  const sections = sectionsOf(body);
  const tokens = marked.lexer(body);
  const h1 = tokens.find((t) => t.type === 'heading' && t.depth === 1);
  const docTitle = metaTitle ?? (h1 ? headingText(h1) : baseName(path));
  const base = pathKey(path);
  const out: Candidate[] = [];
  for (const section of sections) {
    // The document's own H1 names the file: its section is the file's key.
    const own = section.headings.length > 0 && section.headings[0] === docTitle ? section.headings.slice(1) : section.headings;
    const key = own.length > 0 ? `${base}/${slug(own[own.length - 1]) || 'section'}` : base;
    // Not prefixed with the document's title: two sections of one document would share it, and
    // the contradiction detector reads "Runbook › Rollback" / "Runbook › Paging" as two names
    // for one thing. The key keeps the document's path.
    const title = (own.length > 0 ? own.join(' › ') : docTitle).slice(0, MAX_TITLE);
    const anchor = own.length > 0 ? `#${slug(own[own.length - 1])}` : '';
    const parts = splitLong(section.raw.trim());
    for (const [i, content] of parts.entries()) {
      out.push({
        key: fitKey(parts.length > 1 ? `${key}/part-${i + 1}` : key),
        title,
        content,
        tags,
        entities: entitiesOf(`${title}. ${content}`),
        origin: `${path}${anchor}`,
      });
    }
  }
  return out;
}
