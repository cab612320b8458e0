import { timingSafeEqual } from 'node:crypto';

/** Compares an `Authorization` header against the expected bearer token in constant time. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (!header) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return false;
  const given = Buffer.from(m[1] as string);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
