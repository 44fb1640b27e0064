import { addDays, lastCompleteWeek, weekEndInstant } from './iso-week.js';

const MINUTE_MS = 60_000;
export const WEEK_MINUTES = 7 * 24 * 60;
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Minutes after a week ends (the next Monday 00:00 UTC) at which its digest is due: first `day` at `HH:MM`. */
export function scheduleOffsetMinutes(day: Weekday, time: string): number {
  const [h, m] = time.split(':').map(Number);
  return WEEKDAYS.indexOf(day) * 24 * 60 + (h ?? 0) * 60 + (m ?? 0);
}

export interface DueRun {
  weekStart: string;
  dueAt: Date;
}

/** The most recent week whose automatic run is due at `now` (its end plus the offset has passed). */
export function dueWeek(now: Date, offsetMinutes: number): DueRun {
  let weekStart = lastCompleteWeek(now);
  let dueAt = new Date(weekEndInstant(weekStart).getTime() + offsetMinutes * MINUTE_MS);
  if (dueAt.getTime() > now.getTime()) {
    weekStart = addDays(weekStart, -7);
    dueAt = new Date(dueAt.getTime() - WEEK_MINUTES * MINUTE_MS);
  }
  return { weekStart, dueAt };
}
