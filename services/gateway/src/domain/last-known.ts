/**
 * The last answer of an upstream per key, served when the upstream does not answer within
 * `waitMs` or fails (down, silent behind a blackhole, slow): for data that changes rarely and
 * may be a little stale, such as an organization's weekly FAQ digest. The call still runs to
 * its own deadline and refreshes the entry when it answers. A key never answered before waits
 * for the upstream as usual (its error reaches the caller).
 */
export class LastKnown<T> {
  private readonly entries = new Map<string, T>();

  constructor(
    private readonly waitMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async get(key: string, fetch: () => Promise<T>): Promise<T> {
    const call = fetch().then((value) => {
      this.entries.delete(key);
      this.entries.set(key, value);
      if (this.entries.size > this.maxEntries) {
        this.entries.delete(this.entries.keys().next().value as string);
      }
      return value;
    });
    if (!this.entries.has(key)) return call;
    const known = this.entries.get(key) as T;
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<T>((resolve) => {
      timer = setTimeout(() => resolve(known), this.waitMs);
    });
    try {
      return await Promise.race([call.catch(() => known), silent]);
    } finally {
      clearTimeout(timer);
    }
  }
}
