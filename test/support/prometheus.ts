// Reads samples out of the Prometheus text exposition format (what GET /metrics answers).

/** The value of the first sample of `name` whose labels include `labels`, or undefined. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const at = line.lastIndexOf(' ');
    const head = line.slice(0, at);
    if (Object.entries(labels).every(([k, v]) => head.includes(`${k}="${v}"`))) return Number(line.slice(at + 1));
  }
  return undefined;
}

/** Scrapes `url` and returns the text. */
export async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.text();
}
