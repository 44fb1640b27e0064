// Generated from openapi.json by openapi-typescript: do not edit; run `npm run openapi:types`.
export interface paths {
  '/api/v1/agent/kb/search': components['pathItems']['KbSearch'];
  '/api/v1/agent/faq': components['pathItems']['Faq'];
  '/api/v1/agent/tickets': components['pathItems']['Tickets'];
  '/api/v1/agent/answers': components['pathItems']['Answers'];
  '/api/v1/agent/openapi.json': components['pathItems']['OpenApiDocument'];
  '/api/agent/kb/search': components['pathItems']['KbSearch'];
  '/api/agent/faq': components['pathItems']['Faq'];
  '/api/agent/tickets': components['pathItems']['Tickets'];
  '/api/agent/answers': components['pathItems']['Answers'];
  '/api/agent/openapi.json': components['pathItems']['OpenApiDocument'];
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    /** @description One knowledge-base entry that matches the query. */
    SearchResult: {
      /** @description The entry's question. */
      question: string;
      /** @description The entry's answer. */
      answer: string;
      /** @description Relevance, 0–1: the estimated probability that the entry answers the query; higher is better. */
      score: number;
    };
    SearchResults: {
      /** @description Matches, most relevant first (score descending, ties by entry id); empty when nothing matches or the knowledge base is empty. */
      results: components['schemas']['SearchResult'][];
    };
    /**
     * FAQ digest
     * @description The most recently generated weekly FAQ digest. Before the first digest exists the same object says so: `message` is `No FAQ digest has been generated yet.`, `week_start`, `week_end` and `content` are `null` and `ticket_count` is 0. When a digest exists, none of them is `null`.
     */
    FaqDigest: {
      /** @description `FAQ digest for <week_start> to <week_end>`, or `No FAQ digest has been generated yet.` */
      message: string;
      /**
       * Format: date
       * @description Monday of the ISO week (UTC), `YYYY-MM-DD`; `null` when no digest exists yet.
       */
      week_start: string | null;
      /**
       * Format: date
       * @description Sunday of the ISO week (UTC), `YYYY-MM-DD`; `null` when no digest exists yet.
       */
      week_end: string | null;
      /** @description Tickets created in that week; 0 when no digest exists yet. */
      ticket_count: number;
      /** @description The digest in Markdown; `null` when no digest exists yet. */
      content: string | null;
    };
    /**
     * @description New tickets are `open`; staff move them `open → in_progress → resolved → closed`, `resolved → open`, any non-closed → `duplicate`; triage may resolve an `open` ticket it answered automatically.
     * @enum {string}
     */
    TicketStatus: 'open' | 'in_progress' | 'resolved' | 'closed' | 'duplicate';
    /** @enum {string} */
    TicketPriority: 'critical' | 'high' | 'medium' | 'low';
    /**
     * @description The ticket's category. An organization that trained its own triage model has its own category names (set by its administrators); every other organization gets one of the five built-in categories: bug, feature_request, documentation, how_to, general_question.
     * @example bug
     * @example feature_request
     * @example documentation
     * @example how_to
     * @example general_question
     * @example billing
     */
    TicketCategory: string;
    Ticket: {
      /** @description The ticket's number in the organization: 1, 2, 3… in the order the organization's tickets were created, so it says nothing about other organizations. Another organization's ticket with the same number is a different ticket. Tickets created before numbers were per organization kept the id they were given. */
      id: number;
      /** @description The user's text, verbatim. */
      content: string;
      /** @description Set by triage; `null` until then. */
      category: components['schemas']['TicketCategory'] | null;
      /** @description `medium` until triage sets it. */
      priority: components['schemas']['TicketPriority'];
      status: components['schemas']['TicketStatus'];
      /** @description Summary written by triage; `null` until then. */
      ai_summary: string | null;
      /**
       * Format: date-time
       * @description RFC 3339, UTC, milliseconds: `2026-11-21T10:15:30.123Z`.
       */
      created_at: string;
    };
    TicketPage: {
      /** @description Newest first (`created_at` descending, then `id` descending). */
      tickets: components['schemas']['Ticket'][];
      /** @description Pass as `cursor` for the next page; `null` on the last page. */
      next_cursor: string | null;
    };
    /** @description Unknown fields are ignored. */
    CreateTicketRequest: {
      /** @description The user's question or issue, stored verbatim: 1–4000 characters, not only white space. Length is counted in Unicode code points (as JSON Schema `maxLength` counts), which is what the service enforces; an astral character such as an emoji counts once. */
      content: string;
      /** @description Name or identifier of the end user the ticket is opened for, at most 200 characters; empty or white space counts as absent. Length is counted in Unicode code points (as JSON Schema `maxLength` counts), which is what the service enforces; an astral character such as an emoji counts once. */
      authorName?: string;
      /** @description Idempotency key, at most 200 characters; the `Idempotency-Key` header wins when both are sent. Empty or white space counts as absent. Length is counted in Unicode code points (as JSON Schema `maxLength` counts), which is what the service enforces; an astral character such as an emoji counts once. */
      idempotencyKey?: string;
    };
    CreateTicketResult: {
      /** @description The new ticket's number in the organization (its `id` in List tickets), or the original ticket's on an idempotent replay. Numbers are per organization: 1, 2, 3… */
      ticket_id: number;
      /** @description `true` when the idempotency key was used before and nothing was created. */
      duplicate: boolean;
    };
    /** @description Unknown fields are ignored. */
    GenerateAnswerRequest: {
      /** @description The question to answer: 1–2000 characters, not only white space. Length is counted in Unicode code points (as JSON Schema `maxLength` counts), which is what the service enforces; an astral character such as an emoji counts once. */
      question: string;
    };
    AnswerSource: {
      /** @description Question of the knowledge-base entry used. */
      question: string;
      /** @description Its relevance, 0–1: the estimated probability that the entry answers the question. */
      score: number;
    };
    Answer: {
      /** @description The answer, built only from knowledge-base entries; says so when nothing relevant was found. */
      answer: string;
      /** @description Confidence, 0–100: the estimated probability, in percent, that the answer is right (its first source answers the question). */
      confidence: number;
      /** @description The knowledge base covers the whole question. */
      answered_fully: boolean;
      /** @description `confidence` ≥ the organization's threshold (default 85), and the answer was counted toward the monthly deflection limit (only these count). Always false while the usage counter cannot be reached, whatever the confidence. */
      high_confidence: boolean;
      /** @description The knowledge-base entries the answer is built from, most relevant first; absent when none was used. */
      sources?: components['schemas']['AnswerSource'][];
    };
    /** @enum {string} */
    ErrorCode:
      | 'invalid_request'
      | 'invalid_cursor'
      | 'unauthorized'
      | 'insufficient_scope'
      | 'not_found'
      | 'method_not_allowed'
      | 'payload_too_large'
      | 'rate_limited'
      | 'deflection_limit_reached'
      | 'internal_error'
      | 'service_unavailable';
    /** @description The one error body of the API; always `application/json`, never a stack trace or an HTML page. */
    Error: {
      error: {
        /** @description Human-readable description. */
        message: string;
        code: components['schemas']['ErrorCode'];
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 400 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    InvalidRequestError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'invalid_request';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 400 error body of List tickets. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    ListTicketsBadRequestError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @enum {string} */
        code: 'invalid_request' | 'invalid_cursor';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 401 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    UnauthorizedError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'unauthorized';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 403 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    InsufficientScopeError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'insufficient_scope';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 404 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    NotFoundError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'not_found';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 405 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    MethodNotAllowedError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'method_not_allowed';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 413 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    PayloadTooLargeError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'payload_too_large';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 429 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    RateLimitedError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'rate_limited';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 429 error body of Generate an answer. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    AnswersTooManyRequestsError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @enum {string} */
        code: 'rate_limited' | 'deflection_limit_reached';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 500 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    InternalError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'internal_error';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description A 503 error body. The one error body (`Error`) with `error.code` narrowed to the codes of this status. */
    ServiceUnavailableError: {
      error: {
        /** @description Human-readable description. */
        message: string;
        /** @constant */
        code: 'service_unavailable';
        /** @description The offending parameter, body field or header, when there is one. */
        param?: string;
      };
    };
    /** @description This OpenAPI 3.1 document. */
    OpenApiDocument: {
      openapi: string;
      info: Record<string, never>;
      paths: Record<string, never>;
    };
  };
  responses: {
    /** @description `invalid_request`: a missing or invalid parameter or body field (`error.param` names it), malformed JSON, a body that is not a JSON object, or a Content-Type other than application/json. */
    BadRequest: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'RateLimit-Policy': components['headers']['RateLimit-Policy'];
        RateLimit: components['headers']['RateLimit'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['InvalidRequestError'];
      };
    };
    /** @description `invalid_request` (a missing or invalid parameter, named by `error.param`) or `invalid_cursor` (a cursor this service did not produce). */
    BadRequestOrInvalidCursor: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'RateLimit-Policy': components['headers']['RateLimit-Policy'];
        RateLimit: components['headers']['RateLimit'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['ListTicketsBadRequestError'];
      };
    };
    /** @description `unauthorized`: no key, another scheme, a malformed key or an unknown or revoked key. Not counted against the rate limit. */
    Unauthorized: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'WWW-Authenticate': components['headers']['WWW-Authenticate-Unauthorized'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['UnauthorizedError'];
      };
    };
    /** @description `insufficient_scope`: the key lacks the scope this operation needs. Not counted against the rate limit. */
    Forbidden: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'WWW-Authenticate': components['headers']['WWW-Authenticate-InsufficientScope'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['InsufficientScopeError'];
      };
    };
    /** @description `not_found`: no such path. */
    NotFound: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['NotFoundError'];
      };
    };
    /** @description `method_not_allowed`: the path does not serve this method; `Allow` lists those it does. */
    MethodNotAllowed: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        Allow: components['headers']['Allow'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['MethodNotAllowedError'];
      };
    };
    /** @description `payload_too_large`: the body exceeds 64 KiB. */
    PayloadTooLarge: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'RateLimit-Policy': components['headers']['RateLimit-Policy'];
        RateLimit: components['headers']['RateLimit'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['PayloadTooLargeError'];
      };
    };
    /** @description `rate_limited`: the key or organization used up its requests for the last 60 seconds (or, without RateLimit headers, the client IP sent too many failed authentications). Retry after `Retry-After` seconds. */
    TooManyRequests: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'Retry-After': components['headers']['Retry-After'];
        'RateLimit-Policy': components['headers']['RateLimit-Policy-IfCounted'];
        RateLimit: components['headers']['RateLimit-IfCounted'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['RateLimitedError'];
      };
    };
    /** @description `rate_limited` as for every operation, or `deflection_limit_reached`: the organization used up its monthly deflection limit (high-confidence answers); nothing was generated and `Retry-After` is the number of seconds until the next calendar month (UTC). */
    TooManyRequestsOrDeflectionLimit: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'Retry-After': components['headers']['Retry-After'];
        'RateLimit-Policy': components['headers']['RateLimit-Policy-IfCounted'];
        RateLimit: components['headers']['RateLimit-IfCounted'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['AnswersTooManyRequestsError'];
      };
    };
    /** @description `internal_error`: a bug; logged with the request id. */
    InternalError: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'RateLimit-Policy': components['headers']['RateLimit-Policy-IfCounted'];
        RateLimit: components['headers']['RateLimit-IfCounted'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['InternalError'];
      };
    };
    /** @description `service_unavailable`: a backing service is down or did not answer within its deadline. Retry after `Retry-After` seconds. */
    ServiceUnavailable: {
      headers: {
        'X-Request-Id': components['headers']['X-Request-Id'];
        'Retry-After': components['headers']['Retry-After'];
        'RateLimit-Policy': components['headers']['RateLimit-Policy'];
        RateLimit: components['headers']['RateLimit'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['ServiceUnavailableError'];
      };
    };
  };
  parameters: {
    /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
    'X-Request-Id': string;
    /** @description The question or keywords to search for: 1–2000 characters, not only white space (an empty or white-space-only value counts as missing). Length is counted in Unicode code points (as JSON Schema `maxLength` counts), which is what the service enforces; an astral character such as an emoji counts once. */
    KbQuery: string;
    /** @description Maximum number of results: an integer from 1 to 20; default 5. */
    KbLimit: number;
    /** @description Only tickets with this status (`duplicate` included). */
    TicketStatusFilter: components['schemas']['TicketStatus'];
    /** @description Only tickets with this priority. */
    TicketPriorityFilter: components['schemas']['TicketPriority'];
    /** @description Only tickets with this category: one of the built-in five, or one of the organization's own category names. A name no ticket has gives an empty page. */
    TicketCategoryFilter: components['schemas']['TicketCategory'];
    /** @description Page size: an integer from 1 to 20; default 10. */
    TicketsLimit: number;
    /** @description Opaque position copied from `next_cursor` of the previous page; omit it (or send it empty) for the first page. A value this service did not produce, or longer than 1024 characters, is 400 `invalid_cursor`. */
    Cursor: string;
    /** @description Idempotency key of the call: a structured-field string (`"order-42"`) or a bare token of visible ASCII (`order-42`), at most 200 characters once unquoted. It takes precedence over the body field `idempotencyKey`. A repeat of a key already used in the organization returns the original ticket (201, `duplicate: true`) and creates nothing. Length is counted in Unicode code points (as JSON Schema `maxLength` counts), which is what the service enforces; an astral character such as an emoji counts once. */
    'Idempotency-Key': string;
  };
  requestBodies: never;
  headers: {
    /** @description The request id: the client's `X-Request-Id` when it is sane, else a UUID. On every response. */
    'X-Request-Id': string;
    /** @description The quota policies in force (IETF RateLimit header fields, structured fields): per key and per organization, 60-second windows, e.g. `"key";q=600;w=60, "org";q=3000;w=60`. */
    'RateLimit-Policy': string;
    /** @description The state of the policy nearest exhaustion (on a 429, the exhausted one): remaining requests `r` and seconds `t` until the oldest counted request leaves the 60-second window (a request slot frees), e.g. `"key";r=557;t=41`. */
    RateLimit: string;
    /** @description As on successful responses; present when the request was counted against the rate limit (absent on a 429 from failed-authentication throttling, which happens before the key is known). */
    'RateLimit-Policy-IfCounted': string;
    /** @description As on successful responses; present when the request was counted against the rate limit. */
    'RateLimit-IfCounted': string;
    /** @description Seconds to wait before retrying (at least 1). */
    'Retry-After': number;
    /** @description RFC 6750 challenge with the RFC 9728 `resource_metadata` URL; `error="invalid_token"` is added when a key was presented. */
    'WWW-Authenticate-Unauthorized': string;
    /** @description RFC 6750 challenge naming the scope the operation needs, with the RFC 9728 `resource_metadata` URL. */
    'WWW-Authenticate-InsufficientScope': string;
    /** @description The methods the path serves, e.g. `GET, HEAD, POST`. */
    Allow: string;
  };
  pathItems: {
    KbSearch: {
      parameters: {
        query?: never;
        header?: {
          /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
          'X-Request-Id'?: components['parameters']['X-Request-Id'];
        };
        path?: never;
        cookie?: never;
      };
      /**
       * Search the knowledge base
       * @description Semantic search over the organization's knowledge base, most relevant first.
       */
      get: operations['searchKnowledgeBase'];
      put?: never;
      post?: never;
      delete?: never;
      options?: never;
      head?: never;
      patch?: never;
      trace?: never;
    };
    Faq: {
      parameters: {
        query?: never;
        header?: {
          /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
          'X-Request-Id'?: components['parameters']['X-Request-Id'];
        };
        path?: never;
        cookie?: never;
      };
      /**
       * Get the latest FAQ digest
       * @description The most recently generated weekly FAQ digest (ISO weeks, Monday–Sunday, UTC). When none has been generated yet, the body says so with `null` dates and content. No parameters.
       */
      get: operations['getFaqDigest'];
      put?: never;
      post?: never;
      delete?: never;
      options?: never;
      head?: never;
      patch?: never;
      trace?: never;
    };
    Tickets: {
      parameters: {
        query?: never;
        header?: {
          /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
          'X-Request-Id'?: components['parameters']['X-Request-Id'];
        };
        path?: never;
        cookie?: never;
      };
      /**
       * List tickets
       * @description The organization's tickets, newest first, filtered by status, priority and category (AND-ed), one page at a time. Cursors are keyset positions: pages stay stable while tickets are being created.
       */
      get: operations['listTickets'];
      put?: never;
      /**
       * Create a ticket
       * @description Opens a ticket with the user's text. It goes through triage (category, priority, summary) and, when the knowledge base answers it with high confidence, may be answered automatically; otherwise it waits for people. With an idempotency key (header `Idempotency-Key`, or body `idempotencyKey`), a repeat returns the original ticket with `duplicate: true` and creates nothing, whatever its body; concurrent calls with one key create exactly one ticket.
       */
      post: operations['createTicket'];
      delete?: never;
      options?: never;
      head?: never;
      patch?: never;
      trace?: never;
    };
    Answers: {
      parameters: {
        query?: never;
        header?: {
          /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
          'X-Request-Id'?: components['parameters']['X-Request-Id'];
        };
        path?: never;
        cookie?: never;
      };
      get?: never;
      put?: never;
      /**
       * Generate a grounded answer
       * @description Answers a question from the organization's knowledge base only, without opening a ticket. A high-confidence answer counts toward the organization's monthly deflection limit; at the limit nothing is generated and the call is 429 `deflection_limit_reached`. While the usage counter cannot be reached (its database silent or down), answers are still generated but none is high-confidence and none counts; an organization known to be at its limit still gets 429.
       */
      post: operations['generateAnswer'];
      delete?: never;
      options?: never;
      head?: never;
      patch?: never;
      trace?: never;
    };
    OpenApiDocument: {
      parameters: {
        query?: never;
        header?: never;
        path?: never;
        cookie?: never;
      };
      /**
       * Get this OpenAPI document
       * @description This document as JSON, with `servers` naming the deployment. No key needed (and none checked); not rate limited. Also rendered for people at `/docs`.
       */
      get: operations['getOpenApiDocument'];
      put?: never;
      post?: never;
      delete?: never;
      options?: never;
      head?: never;
      patch?: never;
      trace?: never;
    };
  };
}
export type $defs = Record<string, never>;
export interface operations {
  searchKnowledgeBase: {
    parameters: {
      query: {
        /** @description The question or keywords to search for: 1–2000 characters, not only white space (an empty or white-space-only value counts as missing). Length is counted in Unicode code points (as JSON Schema `maxLength` counts), which is what the service enforces; an astral character such as an emoji counts once. */
        query: components['parameters']['KbQuery'];
        /** @description Maximum number of results: an integer from 1 to 20; default 5. */
        limit?: components['parameters']['KbLimit'];
      };
      header?: {
        /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
        'X-Request-Id'?: components['parameters']['X-Request-Id'];
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The matches, most relevant first. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SearchResults'];
        };
      };
      400: components['responses']['BadRequest'];
      401: components['responses']['Unauthorized'];
      403: components['responses']['Forbidden'];
      429: components['responses']['TooManyRequests'];
      500: components['responses']['InternalError'];
      503: components['responses']['ServiceUnavailable'];
    };
  };
  getFaqDigest: {
    parameters: {
      query?: never;
      header?: {
        /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
        'X-Request-Id'?: components['parameters']['X-Request-Id'];
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The latest digest, or the message that there is none yet. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FaqDigest'];
        };
      };
      401: components['responses']['Unauthorized'];
      403: components['responses']['Forbidden'];
      429: components['responses']['TooManyRequests'];
      500: components['responses']['InternalError'];
      503: components['responses']['ServiceUnavailable'];
    };
  };
  listTickets: {
    parameters: {
      query?: {
        /** @description Only tickets with this status (`duplicate` included). */
        status?: components['parameters']['TicketStatusFilter'];
        /** @description Only tickets with this priority. */
        priority?: components['parameters']['TicketPriorityFilter'];
        /** @description Only tickets with this category: one of the built-in five, or one of the organization's own category names. A name no ticket has gives an empty page. */
        category?: components['parameters']['TicketCategoryFilter'];
        /** @description Page size: an integer from 1 to 20; default 10. */
        limit?: components['parameters']['TicketsLimit'];
        /** @description Opaque position copied from `next_cursor` of the previous page; omit it (or send it empty) for the first page. A value this service did not produce, or longer than 1024 characters, is 400 `invalid_cursor`. */
        cursor?: components['parameters']['Cursor'];
      };
      header?: {
        /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
        'X-Request-Id'?: components['parameters']['X-Request-Id'];
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description One page of tickets. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TicketPage'];
        };
      };
      400: components['responses']['BadRequestOrInvalidCursor'];
      401: components['responses']['Unauthorized'];
      403: components['responses']['Forbidden'];
      429: components['responses']['TooManyRequests'];
      500: components['responses']['InternalError'];
      503: components['responses']['ServiceUnavailable'];
    };
  };
  createTicket: {
    parameters: {
      query?: never;
      header?: {
        /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
        'X-Request-Id'?: components['parameters']['X-Request-Id'];
        /** @description Idempotency key of the call: a structured-field string (`"order-42"`) or a bare token of visible ASCII (`order-42`), at most 200 characters once unquoted. It takes precedence over the body field `idempotencyKey`. A repeat of a key already used in the organization returns the original ticket (201, `duplicate: true`) and creates nothing. Length is counted in Unicode code points (as JSON Schema `maxLength` counts), which is what the service enforces; an astral character such as an emoji counts once. */
        'Idempotency-Key'?: components['parameters']['Idempotency-Key'];
      };
      path?: never;
      cookie?: never;
    };
    /** @description A JSON object, at most 64 KiB. */
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateTicketRequest'];
      };
    };
    responses: {
      /** @description Created, or the original ticket of an earlier call with the same idempotency key (`duplicate: true`). */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreateTicketResult'];
        };
      };
      400: components['responses']['BadRequest'];
      401: components['responses']['Unauthorized'];
      403: components['responses']['Forbidden'];
      413: components['responses']['PayloadTooLarge'];
      429: components['responses']['TooManyRequests'];
      500: components['responses']['InternalError'];
      503: components['responses']['ServiceUnavailable'];
    };
  };
  generateAnswer: {
    parameters: {
      query?: never;
      header?: {
        /** @description Optional request id, echoed in the `X-Request-Id` response header and logged. A value outside `^[A-Za-z0-9._:-]{1,128}$` is replaced by a generated UUID. */
        'X-Request-Id'?: components['parameters']['X-Request-Id'];
      };
      path?: never;
      cookie?: never;
    };
    /** @description A JSON object, at most 64 KiB. */
    requestBody: {
      content: {
        'application/json': components['schemas']['GenerateAnswerRequest'];
      };
    };
    responses: {
      /** @description The answer. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Answer'];
        };
      };
      400: components['responses']['BadRequest'];
      401: components['responses']['Unauthorized'];
      403: components['responses']['Forbidden'];
      413: components['responses']['PayloadTooLarge'];
      429: components['responses']['TooManyRequestsOrDeflectionLimit'];
      500: components['responses']['InternalError'];
      503: components['responses']['ServiceUnavailable'];
    };
  };
  getOpenApiDocument: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The OpenAPI 3.1 document. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OpenApiDocument'];
        };
      };
      500: components['responses']['InternalError'];
    };
  };
}
