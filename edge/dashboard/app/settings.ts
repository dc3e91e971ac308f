/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// What the server tells the browser code (edge/dashboard/routes.ts writes it into the shell).
import type { DashboardSettings } from '../routes.ts';

export type { DashboardSettings };

export function readSettings(): DashboardSettings {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="mindgate-dashboard"]');
  if (!meta) throw new Error('the page names no dashboard settings');
  return JSON.parse(meta.content) as DashboardSettings;
}
