import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Returns a short random id (default 8 chars of [0-9a-z]), unbiased. */
export function newId(length = 8): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 252 = 7 * 36: reject the tail of the byte range to keep the draw uniform.
      if (byte < 252) out += ALPHABET[byte % 36];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Returns a random RFC 4122 v4 UUID. */
export function newUuid(): string {
  return randomUUID();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` has the shape of a UUID (any version). */
export function looksLikeUuid(value: string): boolean {
  return UUID_RE.test(value);
}
