// The month a run counts in: the calendar month (UTC) of its creation.
import { describe, expect, it } from 'vitest';
import { monthStart } from '../../services/agents/handlers/run-limit.ts';

describe('monthStart', () => {
  it('is the first instant of the UTC calendar month, at its edges and across years', () => {
    expect(monthStart(Date.parse('2026-11-24T13:05:00Z'))).toBe(Date.parse('2026-11-01T00:00:00Z'));
    expect(monthStart(Date.parse('2026-12-01T00:00:00Z'))).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(monthStart(Date.parse('2026-11-30T23:59:59.999Z'))).toBe(Date.parse('2026-11-01T00:00:00Z'));
    expect(monthStart(Date.parse('2027-01-01T00:30:00+01:00'))).toBe(Date.parse('2026-12-01T00:00:00Z'));
  });
});
