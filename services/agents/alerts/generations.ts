// Hints of the latest generation of a key (an alert's fingerprint, a group), so finding the open
// occurrence does not read every past one. A hint only ever moves forward (a compare-and-set),
// and a stale one only costs the reads from it to the latest.
import type { AlertsContext } from './records.ts';

export async function latestGeneration(ctx: AlertsContext, key: string): Promise<number> {
  return (await ctx.generations.get(key))?.generation ?? 1;
}

export async function noteGeneration(ctx: AlertsContext, key: string, organizationId: string, generation: number): Promise<void> {
  const current = await ctx.generations.get(key);
  if (current && current.generation >= generation) return;
  if (!current && generation === 1) return;
  // Losing the compare-and-set means another replica moved the hint: either way it is a hint.
  await ctx.generations.put(
    { _id: key, organizationId, generation },
    current ? { expect: { generation: current.generation } } : { expect: null },
  );
}
