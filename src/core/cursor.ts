// Opaque page cursors: the sort key of the last item of a page, as base64url JSON. Callers never build or read one;
// they pass back the `nextCursor` a page returned.
import { invalidInput } from './errors.ts';

/** The sort key a cursor carries: a number (a time) and a tie-breaker (a rowid or an id). */
export type CursorKey = readonly [number, number | string];

/** Encodes a sort key as an opaque cursor. */
export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

/** Decodes a cursor made by encodeCursor; throws invalid_input (field `cursor`) for anything else. */
export function decodeCursor(cursor: string): CursorKey {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === 'number' &&
    Number.isFinite(value[0]) &&
    (typeof value[1] === 'string' || (typeof value[1] === 'number' && Number.isFinite(value[1])))
  ) {
    return [value[0], value[1]];
  }
  throw invalidInput(
    'cursor: not a cursor this list returned (pass back the nextCursor of the previous page)',
    'cursor',
  );
}
