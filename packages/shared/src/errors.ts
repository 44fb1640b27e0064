import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';

/**
 * Every machine-readable error code of the API (DESIGN.md §3) plus the admin-only ones, with the
 * HTTP and gRPC status each maps to.
 */
const CODES = {
  invalid_request: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  invalid_cursor: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  unauthorized: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  insufficient_scope: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  method_not_allowed: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED },
  conflict: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  payload_too_large: { http: 413, grpc: GrpcStatus.INVALID_ARGUMENT },
  rate_limited: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  deflection_limit_reached: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  internal_error: { http: 500, grpc: GrpcStatus.INTERNAL },
  service_unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
} as const satisfies Record<string, { http: number; grpc: GrpcStatus }>;

export type ErrorCode = keyof typeof CODES;

export interface AppErrorOptions {
  /** Name of the offending parameter or body field. */
  param?: string;
  /** Seconds a client should wait before retrying (429, 503). */
  retryAfter?: number;
  cause?: unknown;
}

/**
 * The one error type of the project. Trusted errors (isTrusted) are expected
 * outcomes whose message is safe to show a client; anything else is a bug and
 * is reported as internal_error with a generic message.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly retryAfter: number | undefined;
  readonly isTrusted: boolean;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.param = options.param;
    this.retryAfter = options.retryAfter;
    this.isTrusted = code !== 'internal_error';
  }

  get httpStatus(): number {
    return CODES[this.code].http;
  }

  get grpcStatus(): GrpcStatus {
    return CODES[this.code].grpc;
  }
}

export const invalidRequest = (message: string, param?: string): AppError =>
  new AppError('invalid_request', message, param === undefined ? {} : { param });

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(CODES, value);
}

const META_CODE = 'x-error-code';
const META_PARAM = 'x-error-param';
const META_RETRY = 'x-retry-after';

/** Converts any thrown value into the error a gRPC handler returns. */
export function toGrpcError(err: unknown): Partial<ServiceError> {
  const appError = err instanceof AppError ? err : new AppError('internal_error', 'internal error');
  const metadata = new Metadata();
  metadata.set(META_CODE, appError.code);
  if (appError.param !== undefined) metadata.set(META_PARAM, appError.param);
  if (appError.retryAfter !== undefined) metadata.set(META_RETRY, String(appError.retryAfter));
  return { code: appError.grpcStatus, details: appError.message, metadata };
}

/**
 * True for a call the server has no handler for (gRPC UNIMPLEMENTED that carries none of our
 * error codes): a method added after the server's version, as during a rolling deploy.
 */
export function isUnimplementedCall(err: unknown): boolean {
  const grpc = (err instanceof AppError && err.code === 'internal_error' ? err.cause : err) as
    Partial<ServiceError> | undefined;
  return grpc?.code === GrpcStatus.UNIMPLEMENTED && !isErrorCode(grpc.metadata?.get(META_CODE)[0]);
}

/**
 * Converts an error from a gRPC call into an AppError. Errors raised by our own
 * handlers carry their code in trailing metadata; transport failures (peer down,
 * deadline exceeded) become service_unavailable.
 */
export function fromGrpcError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const se = err as Partial<ServiceError>;
  if (typeof se?.code !== 'number') {
    return new AppError('internal_error', 'internal error', { cause: err });
  }
  const code = se.metadata?.get(META_CODE)[0];
  if (isErrorCode(code)) {
    const param = se.metadata?.get(META_PARAM)[0];
    const retry = Number(se.metadata?.get(META_RETRY)[0]);
    return new AppError(code, se.details ?? code, {
      ...(typeof param === 'string' ? { param } : {}),
      ...(Number.isFinite(retry) && retry > 0 ? { retryAfter: retry } : {}),
      cause: err,
    });
  }
  switch (se.code) {
    case GrpcStatus.UNAVAILABLE:
    case GrpcStatus.DEADLINE_EXCEEDED:
    case GrpcStatus.CANCELLED:
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return new AppError('service_unavailable', 'a backing service is unavailable', {
        retryAfter: 1,
        cause: err,
      });
    default:
      return new AppError('internal_error', 'internal error', { cause: err });
  }
}
