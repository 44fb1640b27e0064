// What the generated-client programs (uses-*.ts) must do: call every operation and get every
// response variant the document describes, except 500 (a bug, which no request can produce on
// purpose). The programs run in a user's project beside a client generated from the served
// document; this file is copied there with them and imported by the test to compare.

/** One observed response: the operation, its HTTP status and which variant of the body. */
export interface Seen {
  op: string;
  status: number;
  variant: string;
}

/** Phase `up`: every service running. Phase `down`: every upstream service stopped. */
export type Phase = 'up' | 'down';

export interface ProgramConfig {
  phase: Phase;
  url: string;
  keys: {
    /** Organization `clients`: every scope; its FAQ digest exists. */
    all: string;
    /** Organization `fresh`: every scope; no digest yet; deflection limit 1; same KB. */
    fresh: string;
    /** kb:read, faq:read, tickets:read. */
    readOnly: string;
    /** tickets:write only. */
    writeOnly: string;
    /** Organization `limited`: every scope, one request per minute. */
    limited: string;
    /**
     * Organization `unseen`: every scope, used only in phase `down`. The gateway answers the FAQ
     * of an organization it answered before from that last digest while the digest service is
     * away, so only an organization it never answered sees the FAQ's 503.
     */
    unseen: string;
  };
}

const ERRORS_OF_EVERY_OPERATION = [
  [401, 'unauthorized'],
  [403, 'insufficient_scope'],
  [429, 'rate_limited'],
] as const;

const OPERATIONS = [
  'searchKnowledgeBase',
  'getFaqDigest',
  'listTickets',
  'createTicket',
  'generateAnswer',
] as const;

/** Every variant, in the order the programs produce them. */
export const EXPECTED: Record<Phase, Seen[]> = {
  up: [
    { op: 'getOpenApiDocument', status: 200, variant: 'document' },
    { op: 'searchKnowledgeBase', status: 200, variant: 'results' },
    { op: 'searchKnowledgeBase', status: 400, variant: 'invalid_request' },
    { op: 'getFaqDigest', status: 200, variant: 'digest' },
    { op: 'getFaqDigest', status: 200, variant: 'none yet' },
    { op: 'getFaqDigest', status: 200, variant: 'digest (/api/agent)' },
    { op: 'createTicket', status: 201, variant: 'created' },
    { op: 'createTicket', status: 201, variant: 'duplicate' },
    { op: 'createTicket', status: 400, variant: 'invalid_request' },
    { op: 'createTicket', status: 413, variant: 'payload_too_large' },
    { op: 'listTickets', status: 200, variant: 'page with next_cursor' },
    { op: 'listTickets', status: 200, variant: 'last page' },
    { op: 'listTickets', status: 400, variant: 'invalid_request' },
    { op: 'listTickets', status: 400, variant: 'invalid_cursor' },
    { op: 'generateAnswer', status: 200, variant: 'answer with sources' },
    { op: 'generateAnswer', status: 200, variant: 'answer without sources' },
    { op: 'generateAnswer', status: 400, variant: 'invalid_request' },
    { op: 'generateAnswer', status: 413, variant: 'payload_too_large' },
    { op: 'generateAnswer', status: 429, variant: 'deflection_limit_reached' },
    ...ERRORS_OF_EVERY_OPERATION.flatMap(([status, variant]) =>
      OPERATIONS.map((op) => ({ op, status, variant })),
    ),
  ],
  down: OPERATIONS.map((op) => ({ op, status: 503, variant: 'service_unavailable' })),
};

/** The program's input, from the CLIENT_PROGRAM environment variable (JSON). */
export function programConfig(): ProgramConfig {
  const raw = process.env.CLIENT_PROGRAM;
  if (!raw) throw new Error('CLIENT_PROGRAM is not set');
  return JSON.parse(raw) as ProgramConfig;
}

/** What both generated clients return for a call: the response, and the error body if any. */
export interface Outcome {
  response: { status: number };
  error?: unknown;
}

/** The `error.code` of an error body. */
function codeOf(outcome: Outcome): string | undefined {
  const body = outcome.error as { error?: { code?: unknown } } | undefined;
  return typeof body?.error?.code === 'string' ? body.error.code : undefined;
}

/** Records what one call returned; prints the list as JSON when the program ends. */
export class Recorder {
  readonly seen: Seen[] = [];

  constructor() {
    process.on('beforeExit', () => process.stdout.write(`${JSON.stringify(this.seen)}\n`));
  }

  /** Records a success after checking its status and what `ok` says about its body. */
  expect(op: string, status: number, variant: string, outcome: Outcome, ok: boolean): void {
    if (outcome.response.status !== status || !ok) {
      throw new Error(`${op}: expected ${status} ${variant}, got ${outcome.response.status}`);
    }
    this.seen.push({ op, status, variant });
  }

  /** Records an error response after checking its status and `error.code`. */
  error(op: string, status: number, code: string, outcome: Outcome): void {
    this.expect(op, status, code, outcome, codeOf(outcome) === code);
  }
}

/** A body over the 64 KiB limit. */
export const OVERSIZED = 'x'.repeat(70 * 1024);

export type Operation = (typeof OPERATIONS)[number];

/** One call of an operation with an API key, as the program makes it with its client. */
export type CallWithKey = (op: Operation, key: string) => Promise<Outcome>;

/** The errors every operation has: 401 (unknown key), 403 (key without its scope), 429. */
export async function errorsOfEveryOperation(
  seen: Recorder,
  config: ProgramConfig,
  call: CallWithKey,
): Promise<void> {
  for (const op of OPERATIONS) {
    seen.error(op, 401, 'unauthorized', await call(op, 'sak_live_not_a_key'));
  }
  for (const op of OPERATIONS) {
    const withoutScope = ['createTicket', 'generateAnswer'].includes(op)
      ? config.keys.readOnly
      : config.keys.writeOnly;
    seen.error(op, 403, 'insufficient_scope', await call(op, withoutScope));
  }
  await call('searchKnowledgeBase', config.keys.limited); // the one request allowed
  for (const op of OPERATIONS) {
    seen.error(op, 429, 'rate_limited', await call(op, config.keys.limited));
  }
}

/** Phase `down`: every operation is 503 while its service is stopped. */
export async function unavailable(
  seen: Recorder,
  config: ProgramConfig,
  call: CallWithKey,
): Promise<void> {
  for (const op of OPERATIONS) {
    seen.error(op, 503, 'service_unavailable', await call(op, config.keys.unseen));
  }
}

/** Fails when the program skipped a variant of its phase. */
export function assertComplete(seen: Recorder, config: ProgramConfig): void {
  if (seen.seen.length !== EXPECTED[config.phase].length) throw new Error('a variant was skipped');
}
