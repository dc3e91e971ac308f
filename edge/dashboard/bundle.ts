// The dashboard's browser code, compiled by esbuild when the web listener starts: in memory (no
// build step to forget, no output directory to ship), minified, with its gzip form ready so that
// a browser that accepts it is never sent the larger one. A content hash names each file, so the
// HTML shell can let browsers keep them for a year. Areas loaded on demand (preact-iso's `lazy`)
// become chunks of their own, so the first load carries only the entry and what it imports.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface Asset {
  /** `app-<hash>.js`, `app-<hash>.css`. */
  name: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

export interface DashboardBundle {
  /** The entry the shell loads. */
  script: Asset;
  style: Asset;
  /** Code the entry imports on demand (`chunk-<hash>.js`), named by esbuild's content hash. */
  chunks: Asset[];
}

const ENTRY = path.join(import.meta.dirname, 'app', 'main.tsx');

function asset(kind: 'js' | 'css', body: Buffer, name?: string): Asset {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  return {
    name: name ?? `app-${hash}.${kind}`,
    type: kind === 'js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${hash}"`,
  };
}

/** Compiles the dashboard (app/main.tsx and the CSS it imports). */
export async function buildDashboard(): Promise<DashboardBundle> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    minify: true,
    format: 'esm',
    splitting: true,
    // The entry and chunks import each other by these names: they are served as they are.
    chunkNames: 'chunk-[hash]',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: 'out',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const named = (f: { path: string }) => path.basename(f.path);
  const js = result.outputFiles.find((f) => named(f) === 'main.js');
  const css = result.outputFiles.find((f) => named(f) === 'main.css');
  if (!js || !css) throw new Error('the dashboard build produced no script or no style sheet');
  // The entry is imported by no chunk, so it may take its own content-hash name.
  const chunks = result.outputFiles
    .filter((f) => named(f).startsWith('chunk-') && f.path.endsWith('.js'))
    .map((f) => asset('js', Buffer.from(f.contents), named(f)));
  return { script: asset('js', Buffer.from(js.contents)), style: asset('css', Buffer.from(css.contents)), chunks };
}
