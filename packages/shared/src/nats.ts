/**
 * Connection options every NATS client of the services shares (spread into `connect()`).
 *
 * `noAsyncTraces`: by default nats.js captures a stack trace (`new Error()`) for every
 * request, JetStream publish and pull, up to three per call, only to decorate the error
 * should that call fail. Measured with JetStream publishes against the local server: 66–80 µs
 * of client CPU per publish with them, 38–46 µs without (docs/performance.md). Our errors are
 * logged by message and code, never by the caller's stack, so nothing is lost.
 */
export const NATS_CLIENT_OPTIONS = { noAsyncTraces: true } as const;
