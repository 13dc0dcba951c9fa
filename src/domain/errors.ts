// One error type with stable codes; HTTP mapping happens in the daemon's error handler only.

export const ERROR_STATUS = {
  API_KEY_INVALID: 401,
  SIGNATURE_MISSING: 401,
  SIGNATURE_INVALID: 401,
  SIGNATURE_EXPIRED: 401,
  IDEMPOTENCY_KEY_REQUIRED: 400,
  IDEMPOTENCY_KEY_CONFLICT: 409,
  INVOICE_NOT_FOUND: 404,
  INVOICE_NOT_AVAILABLE: 400,
  INVOICE_EXPIRED: 400,
  INVOICE_CANCELLED: 400,
  INVOICE_CANNOT_BE_CANCELLED: 400,
  INVALID_CURRENCY: 400,
  PAYMENT_ALREADY_IN_PROGRESS: 400,
  NO_AVAILABLE_WALLET: 503,
  CHAIN_NOT_MONITORED: 503,
  PAYMENT_NOT_FOUND: 404,
  PAYMENT_EXPIRED: 400,
  PAYMENT_NOT_CONFIRMABLE: 400,
  BLOCKCHAIN_NOT_SUPPORTED: 400,
  CONTRACT_NOT_CONFIGURED: 400,
  RATE_UNAVAILABLE: 503,
  TX_NOT_FOUND: 404,
  TX_FAILED: 400,
  TX_CONTRACT_MISMATCH: 400,
  TX_PAYMENT_MISMATCH: 400,
  UNAUTHORIZED: 401,
  VALIDATION_ERROR: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  HEADERS_TOO_LARGE: 431,
  REQUEST_TIMEOUT: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  DATABASE_BUSY: 503,
  INTERNAL_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * The root of chaingate's own errors: the class's name as `name`, and an optional cause. Below it,
 * GatewayError (coded answers on the wire), UsageError (exit code 2), ChainError (what a chain's
 * node or API did), and the store's and configuration's own. The SDK's errors stand alone, as the
 * SDK does.
 */
export class BaseError extends Error {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A chain's node or API answered wrongly, refused, or changed under a read. */
export class ChainError extends BaseError {}

export class GatewayError extends BaseError {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers;
  }
}

/**
 * Driver codes of a write that lost a lock to another connection: SQLite busy or locked, PostgreSQL
 * serialization failure, deadlock, lock_not_available (lock_timeout) and lock-timeout cancellation.
 * Retried from the start of the transaction; when that does not succeed in time, DATABASE_BUSY.
 */
const LOCK_CONFLICT_CODES = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY', 'SQLITE_LOCKED', '40001', '40P01', '55P03']);

/** Whether `err` (or any error in its cause chain) is a lost lock rather than a fault. */
export function isLockConflict(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && LOCK_CONFLICT_CODES.has(code)) return true;
  }
  return false;
}

/** The coded answer for a write that could not get the database's lock in time. */
export function databaseBusy(cause: unknown): GatewayError {
  return new GatewayError('DATABASE_BUSY', 'The database is busy (another process holds its write lock); retry shortly', { headers: { 'Retry-After': '1' }, cause });
}

/** An address that is not one of its family and network; the message never repeats the address. */
export class InvalidAddressError extends BaseError {
  override readonly name = 'InvalidAddressError';
}

/** A mistake by whoever ran the program (bad flag, bad config, unknown id): exit code 2, one clear line. */
export class UsageError extends BaseError {
  override readonly name = 'UsageError';
}
