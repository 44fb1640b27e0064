/** RFC 3339 UTC with milliseconds, the one timestamp format of the API. */
export function toRfc3339(date: Date): string {
  return date.toISOString();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
