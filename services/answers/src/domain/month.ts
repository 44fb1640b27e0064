/** Deflection months are calendar months in UTC, written YYYY-MM. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** The first instant of the UTC month after the one containing `at`. */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** Whole seconds from `at` until the next UTC month begins (at least 1): the Retry-After of a full ledger. */
export function secondsUntilNextMonth(at: Date): number {
  return Math.max(1, Math.ceil((nextMonthStart(at).getTime() - at.getTime()) / 1000));
}
