// Saving an API answer as a file. The export operations need the bearer token, so a plain link
// cannot fetch them: the page reads the answer and hands the browser a Blob to save under a name.
import type { Api } from './api.ts';

/** Reads `path` as text and saves it as `filename`; answers how many bytes were saved. */
export async function downloadFile(api: Api, path: string, filename: string, type: string): Promise<number> {
  const { data } = await api.call<string>('GET', path, { text: true });
  const blob = new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The click starts the download at once; the URL only has to outlive this task.
  setTimeout(() => URL.revokeObjectURL(url), 0);
  return blob.size;
}
