// Slack's request signing for the Events API over HTTP: `X-Slack-Signature: v0=<hex HMAC-SHA256 of
// "v0:<X-Slack-Request-Timestamp>:<raw body>" under the signing secret>`, checked on the raw bytes before anything is
// parsed. The timestamp must be within five minutes of the clock, the digests are compared in constant time, and a
// signature already accepted within that window is refused (a replay).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';

/** How far a request's timestamp may be from the clock (Slack's recommendation). */
export const SIGNATURE_WINDOW_MS = 5 * 60_000;
/** At most this many accepted signatures are remembered (older ones are dropped first). */
const MAX_REMEMBERED = 100_000;

/** The verdict on one request: `ok`, or why it was refused. */
export type SignatureVerdict = 'ok' | 'missing' | 'stale' | 'forged' | 'replayed';

/** The signature header Slack would send for `body` at `timestamp` (seconds) under `secret`; used by tests too. */
export function slackSignature(secret: string, timestamp: number | string, body: Buffer | string): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(body);
  return `v0=${hmac.digest('hex')}`;
}

/** Verifies the requests signed with one signing secret, remembering the accepted ones to refuse replays. */
export class SlackSignatureVerifier {
  #secret: string;
  #clock: Clock;
  /** Accepted signatures → when they leave the window (insertion order is roughly time order). */
  #seen = new Map<string, number>();

  constructor(secret: string, clock: Clock) {
    this.#secret = secret;
    this.#clock = clock;
  }

  /**
   * Checks `raw` against the two headers. Returns `ok` (and remembers the signature) only for a fresh, well-signed
   * request not seen before; otherwise the reason. Nothing of the body is parsed.
   */
  verify(raw: Buffer, timestamp: string | undefined, signature: string | undefined): SignatureVerdict {
    if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp) || !signature.startsWith('v0=')) return 'missing';
    const now = this.#clock.now();
    if (Math.abs(now - Number(timestamp) * 1000) > SIGNATURE_WINDOW_MS) return 'stale';
    const expected = Buffer.from(slackSignature(this.#secret, timestamp, raw), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged';
    this.#prune(now);
    if (this.#seen.has(signature)) return 'replayed';
    this.#seen.set(signature, Number(timestamp) * 1000 + SIGNATURE_WINDOW_MS);
    return 'ok';
  }

  /** Forgets an accepted signature (its request was not processed, so Slack's identical redelivery is welcome). */
  forget(signature: string | undefined): void {
    if (signature) this.#seen.delete(signature);
  }

  #prune(now: number): void {
    for (const [signature, until] of this.#seen) {
      if (until >= now && this.#seen.size < MAX_REMEMBERED) break;
      this.#seen.delete(signature);
    }
  }
}
