// manage_memories with `items`: several creates or updates in one call (PutMemories), for an
// agent seeding what it knows or importing a conversation. Each item is checked as a single
// create or update would be; the text says, per item, what happened.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { type ManageMemoriesArgs, WRITE_ITEM_SCHEMA } from './brain-tool-definitions.ts';
import { contradictionJson, duplicateJson, isoArgument, memoryJson, nsEnum, result, toolError, toTimestamp } from './brain-tool-json.ts';
import type { BrainToolContext } from './brain-tools.ts';
import { writeOutcome } from './manage-memories.ts';

type Item = z.infer<typeof WRITE_ITEM_SCHEMA>;

/** Each item checked as one memory's fields, or a tool error naming the first wrong one. */
function checkItems(raw: NonNullable<ManageMemoriesArgs['items']>): Item[] | CallToolResult {
  const items: Item[] = [];
  for (const [i, value] of raw.entries()) {
    const parsed = WRITE_ITEM_SCHEMA.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return toolError(
        `items[${i}].${issue.path.join('.') || '?'}: ${issue.message}. Each item has namespace, key, content and optionally title, tags, entities, event_time, expected_version, allow_duplicate.`,
      );
    }
    const eventTime = isoArgument(`items[${i}].event_time`, parsed.data.event_time);
    if (typeof eventTime === 'object') return eventTime;
    items.push(parsed.data);
  }
  return items;
}

export async function putMemories(
  { brain, organizationId, source }: BrainToolContext,
  action: 'create' | 'update',
  raw: NonNullable<ManageMemoriesArgs['items']>,
): Promise<CallToolResult> {
  const items = checkItems(raw);
  if (!Array.isArray(items)) return items;
  const unversioned = items.findIndex((item) => item.expected_version === undefined);
  if (action === 'update' && unversioned >= 0) {
    return toolError(`update needs expected_version on every item (items[${unversioned}] has none): the version you read.`);
  }
  const res = await brain.putMemories({
    organizationId,
    memories: items.map((item) => ({
      organizationId,
      namespace: nsEnum(item.namespace),
      key: item.key,
      title: item.title ?? '',
      content: item.content,
      tags: item.tags ?? [],
      entities: item.entities ?? [],
      source,
      expectedVersion: BigInt(action === 'create' ? 0 : item.expected_version!),
      allowDuplicate: item.allow_duplicate ?? false,
      eventTime: item.event_time === undefined ? undefined : toTimestamp(Date.parse(item.event_time)),
    })),
  });
  const out = res.results.map((r, i) => {
    const ref = { namespace: items[i]!.namespace, key: items[i]!.key };
    if (!r.response) return { ...ref, outcome: 'failed' as const, error: r.error, duplicates: [], contradictions: [] };
    const memory = r.response.memory ? memoryJson(r.response.memory) : undefined;
    return {
      ...ref,
      outcome: writeOutcome(r.response),
      version: memory?.version,
      duplicates: r.response.duplicates.map(duplicateJson),
      contradictions: r.response.contradictions.map(contradictionJson),
    };
  });
  const counts = new Map<string, number>();
  for (const item of out) counts.set(item.outcome, (counts.get(item.outcome) ?? 0) + 1);
  const lines = [`${items.length} items: ${[...counts].map(([outcome, n]) => `${n} ${outcome}`).join(', ')}.`];
  for (const item of out) {
    const ref = `${item.namespace}/${item.key}`;
    if (item.outcome === 'failed') lines.push(`- ${ref}: failed: ${item.error}`);
    else if (item.outcome === 'duplicate') {
      lines.push(`- ${ref}: not written, similar memory exists: ${item.duplicates.map((d) => `${d.namespace}/${d.key}`).join(', ')}`);
    } else if (item.contradictions.length) {
      lines.push(`- ${ref}: ${item.outcome}, flagged ${item.contradictions.map((c) => c.id).join(', ')}: resolve or fix a memory`);
    }
  }
  return result(lines.join('\n'), {
    action,
    outcome: summaryOutcome(out),
    duplicates: [],
    contradictions: [],
    closed_contradictions: [],
    items: out,
  });
}

/** The outcome of the whole call: the single one when all items agree, else "updated"/"created". */
function summaryOutcome(items: { outcome: string }[]): 'created' | 'updated' | 'unchanged' | 'duplicate' {
  const kinds = new Set(items.map((i) => i.outcome));
  if (kinds.size === 1 && (kinds.has('unchanged') || kinds.has('duplicate'))) return [...kinds][0] as 'unchanged' | 'duplicate';
  return kinds.has('updated') ? 'updated' : 'created';
}
