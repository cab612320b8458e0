// GitHub's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body under the secret>`,
// compared in constant time on the exact bytes received, before anything is parsed.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The `X-Hub-Signature-256` value GitHub sends for `body` under `secret`. */
export function signBody(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** True when `header` is the signature of `body` under `secret` (constant-time; false for a missing or malformed one). */
export function verifySignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header)) return false;
  const expected = Buffer.from(signBody(secret, body).slice('sha256='.length), 'hex');
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
