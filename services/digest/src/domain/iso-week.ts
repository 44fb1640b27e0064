import { DAY_MS, invalidRequest } from '@support-agent/shared';

/**
 * ISO weeks in UTC (DESIGN.md §3): Monday 00:00:00.000 to Sunday 23:59:59.999.
 * A week is named by its Monday as `YYYY-MM-DD`.
 */

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` of a UTC instant. */
export function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Midnight UTC of a `YYYY-MM-DD` date, or undefined when the text is not a real calendar date. */
export function parseIsoDate(text: string): Date | undefined {
  const m = DATE_RE.exec(text);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC rolls 2026-02-30 over to March: a round trip catches it.
  return isoDate(date) === text && year >= 1970 ? date : undefined;
}

export function addDays(weekStartOrDate: string, days: number): string {
  const date = parseIsoDate(weekStartOrDate);
  if (!date) throw new Error(`not a date: ${weekStartOrDate}`);
  return isoDate(new Date(date.getTime() + days * DAY_MS));
}

/** The Monday (`YYYY-MM-DD`) of the ISO week containing `instant`, in UTC. */
export function weekStartOf(instant: Date): string {
  const midnight = Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate());
  const sinceMonday = (instant.getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return isoDate(new Date(midnight - sinceMonday * DAY_MS));
}

/** The Sunday that ends the week starting on `weekStart`. */
export function weekEndOf(weekStart: string): string {
  return addDays(weekStart, 6);
}

/** The first instant after the week: the next Monday 00:00 UTC. */
export function weekEndInstant(weekStart: string): Date {
  return parseIsoDate(addDays(weekStart, 7))!;
}

/** The last week that has fully ended at `now` (the default digest week). */
export function lastCompleteWeek(now: Date): string {
  return addDays(weekStartOf(now), -7);
}

/** ISO 8601 week name, e.g. `2026-W47`; the week-numbering year can differ from the calendar year. */
export function isoWeekName(weekStart: string): string {
  // The Thursday of a week decides its year; week 1 holds the year's first Thursday.
  const thursday = parseIsoDate(addDays(weekStart, 3))!;
  const year = thursday.getUTCFullYear();
  const jan1 = Date.UTC(year, 0, 1);
  const week = Math.floor((thursday.getTime() - jan1) / DAY_MS / 7) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/**
 * Validates a requested week: `YYYY-MM-DD`, a Monday, not after the current week
 * (the current week may be built, partial). Errors name the parameter `week_start`.
 */
export function requireWeekStart(text: string, now: Date): string {
  const date = parseIsoDate(text.trim());
  if (!date) throw invalidRequest('week_start must be a date in the form YYYY-MM-DD', 'week_start');
  if (date.getUTCDay() !== 1)
    throw invalidRequest('week_start must be a Monday (ISO weeks start on Monday)', 'week_start');
  const weekStart = isoDate(date);
  if (weekStart > weekStartOf(now))
    throw invalidRequest('week_start is in the future', 'week_start');
  return weekStart;
}
