// Reads back what the platform's pages escaped (edge/http/escape-html.ts), named or numeric.
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"' };

export function unescapeHtml(text: string): string {
  return text.replace(/&(?:#(\d+)|([a-z]+));/g, (whole, code: string | undefined, name: string | undefined) =>
    code ? String.fromCharCode(Number(code)) : (NAMED[name!] ?? whole),
  );
}
