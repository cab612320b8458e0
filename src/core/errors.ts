// Zod's messages for a value left out say "required" everywhere (set once, as this module loads).
import './zod-messages.ts';
import type { ZodError } from 'zod';

/** Machine-readable error kinds shared by every surface (RPC codes, HTTP statuses, CLI exit codes derive from them). */
export type ErrorKind = 'invalid_input' | 'not_found' | 'limit' | 'conflict' | 'forbidden' | 'unavailable' | 'internal';

/** An error meant to be shown to the caller as-is: the message says what is wrong and, where it helps, what to do. */
export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly field: string | undefined;

  constructor(kind: ErrorKind, message: string, field?: string) {
    super(message);
    this.name = 'AppError';
    this.kind = kind;
    this.field = field;
  }
}

/** Bad input from a caller; `field` names the offending key. */
export function invalidInput(message: string, field?: string): AppError {
  return new AppError('invalid_input', message, field);
}

/** A referenced thing does not exist. */
export function notFound(message: string): AppError {
  return new AppError('not_found', message);
}

/** A configured limit was reached. */
export function limitReached(message: string): AppError {
  return new AppError('limit', message);
}

/** The request conflicts with the current state (e.g. session already finished). */
export function conflict(message: string): AppError {
  return new AppError('conflict', message);
}

/** Formats zod issues as one line per issue: `field: reason`. Expects a ZodError; returns readable text. */
export function formatZodError(error: ZodError, prefix = ''): string {
  return error.issues
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/** Converts a ZodError into an invalid_input AppError naming the first offending field. */
export function fromZodError(error: ZodError, prefix = ''): AppError {
  const first = error.issues[0];
  const field = first ? [prefix, ...first.path.map(String)].filter(Boolean).join('.') : undefined;
  return invalidInput(formatZodError(error, prefix), field || undefined);
}

/** Returns the message of any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
