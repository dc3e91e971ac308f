// A job's schedule: a cron expression read by croner, in an IANA time zone. croner computes the
// occurrences in the zone's local time, so they follow its daylight-saving changes: a local time
// that does not exist on the spring-forward day (02:30 in Europe/Berlin) fires at the first
// instant after the gap (03:00), and one that happens twice on the fall-back day fires once, at
// its first instance.
import { Cron } from 'croner';
import { invalid } from '../../common/rpc/validate.ts';

export interface Schedule {
  schedule: string;
  timeZone: string;
}

/** The zone the job's times are in: empty means UTC. */
export const zoneOf = (timeZone: string) => (timeZone === '' ? 'UTC' : timeZone);

/** INVALID_ARGUMENT naming time_zone for a name the runtime's time-zone database does not hold. */
export function requireTimeZone(timeZone: string): string {
  if (timeZone.length > 100) invalid('time_zone', 'must be at most 100 characters');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zoneOf(timeZone) });
  } catch {
    invalid('time_zone', `"${timeZone}" is not an IANA time zone (such as Europe/Berlin or America/New_York)`);
  }
  return timeZone;
}

function cronOf(s: Schedule): Cron {
  // Paused: the job is only asked for occurrences, never run by croner's own timers.
  return new Cron(s.schedule, { timezone: zoneOf(s.timeZone), paused: true, mode: '5-or-6-parts' });
}

/** INVALID_ARGUMENT naming schedule (or time_zone) unless the schedule has an occurrence. */
export function requireSchedule(s: Schedule, now: number): Schedule {
  requireTimeZone(s.timeZone);
  if (s.schedule.trim() === '') invalid('schedule', 'is required');
  if (s.schedule.length > 200) invalid('schedule', 'must be at most 200 characters');
  let cron: Cron;
  try {
    cron = cronOf(s);
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^CronPattern: /, '') : String(err);
    invalid('schedule', `is not a cron expression of 5 fields (or 6 with seconds first): ${why}`);
  }
  if (!cron.nextRun(new Date(now))) invalid('schedule', 'has no occurrence from now on');
  return s;
}

/** The first occurrence strictly after `after` (epoch ms); undefined when there is none. */
export function nextAfter(s: Schedule, after: number): number | undefined {
  return cronOf(s).nextRun(new Date(after))?.getTime();
}

/** Occurrences counted at most: a job down for months would otherwise be walked minute by minute. */
export const MAX_COUNTED = 1_000;

/** How many occurrences fall in (after, until] (up to MAX_COUNTED), and the latest of them. */
export function occurrencesBetween(s: Schedule, after: number, until: number): { count: number; latest?: number } {
  const cron = cronOf(s);
  let count = 0;
  for (let t = cron.nextRun(new Date(after)); t && t.getTime() <= until && count < MAX_COUNTED; t = cron.nextRun(t)) count++;
  // previousRuns looks strictly before its reference: one millisecond on includes `until` itself.
  const latest = cron.previousRuns(1, new Date(until + 1))[0]?.getTime();
  return { count, latest: latest !== undefined && latest > after ? latest : undefined };
}

/** An occurrence as people of the zone read it: "2026-03-29 03:00 +02:00". */
export function localTime(at: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zoneOf(timeZone),
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(new Date(at));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const offset = part('timeZoneName').replace(/^GMT/, '') || '+00:00';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${offset}`;
}
