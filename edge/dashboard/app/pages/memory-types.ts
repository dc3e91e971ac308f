// A memory as the Agents API answers it (edge/api/memory-json.ts), for the memory screens.
export interface Memory {
  namespace: string;
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  version: number;
  updated_at: string | null;
  written_by: { client_id: string; user_id: string; client_name: string };
  feedback: { worked: number; failed: number };
}
