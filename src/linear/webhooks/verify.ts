// Signature and freshness check of a webhook delivery with @linear/sdk's webhook client, plus the delivery id and the
// ordering key the queue needs.
import { createHash } from 'node:crypto';
import { LinearWebhookClient } from '@linear/sdk/webhooks';

/** Result of checking a raw delivery (`text`: the body decoded as UTF-8, as parsed). */
export type VerifyResult =
  { ok: true; payload: Record<string, unknown>; text: string } | { ok: false; status: 400 | 401; error: string };

/**
 * @linear/sdk's LinearWebhookClient, with `parseData` decoding and parsing a body once: the SDK's `verify` parses the
 * body to read the signed timestamp (after the HMAC over the raw bytes matched) and `parseData` parses it again for its
 * result. This client's body parser (the SDK's private `parseBodyAsWebhookPayload`, replaced on the instance) keeps the
 * parse of the body being checked for the second call on the same Buffer (both happen in one synchronous call), so
 * what is checked and what is returned are still the same bytes, and the SDK still does every check.
 */
export class OneParseWebhookClient {
  readonly sdk: LinearWebhookClient;
  #body: Buffer | undefined;
  #text = '';
  #parsed: unknown;

  constructor(secret: string) {
    this.sdk = new LinearWebhookClient(secret);
    (this.sdk as unknown as { parseBodyAsWebhookPayload: (rawBody: Buffer) => unknown }).parseBodyAsWebhookPayload = (
      rawBody,
    ) => {
      if (rawBody !== this.#body) {
        const text = rawBody.toString();
        this.#parsed = JSON.parse(text) as unknown;
        this.#text = text;
        this.#body = rawBody;
      }
      return this.#parsed;
    };
  }

  /** `parseData` of the SDK (signature over the raw bytes, signed timestamp); also returns the body decoded as UTF-8. */
  parseData(rawBody: Buffer, signature: string): { payload: unknown; text: string } {
    this.#body = undefined;
    try {
      const payload = this.sdk.parseData(rawBody, signature) as unknown;
      return { payload, text: this.#body === rawBody ? this.#text : rawBody.toString() };
    } finally {
      this.#body = undefined;
      this.#text = '';
      this.#parsed = undefined;
    }
  }
}

/**
 * Verifies HMAC-SHA256 of the RAW body against `linear-signature` and that `webhookTimestamp` (in the signed body) is
 * within Linear's 60 s, using LinearWebhookClient. 401 for a missing or wrong signature; 400 for a body that is not a
 * JSON object or a stale / missing timestamp.
 */
export function verifyDelivery(
  client: LinearWebhookClient | OneParseWebhookClient,
  rawBody: Buffer,
  signature: string | undefined,
): VerifyResult {
  if (!signature) return { ok: false, status: 401, error: 'missing linear-signature header' };
  let payload: unknown;
  let text: string | undefined;
  try {
    if (client instanceof OneParseWebhookClient) ({ payload, text } = client.parseData(rawBody, signature));
    else payload = client.parseData(rawBody, signature);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof SyntaxError) return { ok: false, status: 400, error: 'body is not JSON' };
    if (/signature/i.test(message)) return { ok: false, status: 401, error: 'invalid webhook signature' };
    return { ok: false, status: 400, error: `webhookTimestamp rejected: ${message} (must be within 60 s of now)` };
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return { ok: false, status: 400, error: 'body is not a JSON object' };
  return { ok: true, payload: payload as Record<string, unknown>, text: text ?? rawBody.toString('utf8') };
}

const DELIVERY_ID = /^[A-Za-z0-9._:-]{1,200}$/;
/** The signed timestamp member as it appears in the raw body (object keys cannot contain an unescaped quote). */
const TIMESTAMP_MEMBER = /"webhookTimestamp"\s*:\s*-?[0-9.eE+-]+/g;

/**
 * The dedup key of a delivery: the `linear-delivery` header (one UUID per delivery, kept on redelivery). Without it,
 * the payload's `webhookId` — which names the webhook, not the delivery — plus a hash of the RAW body with its
 * `webhookTimestamp` member blanked (a redelivery is re-signed with a new timestamp but carries the same event). The
 * hash is over bytes, never over the parsed value, so no nesting depth can make it fail.
 */
export function deliveryKey(header: string | undefined, payload: Record<string, unknown>, rawBody: Buffer): string {
  if (header && DELIVERY_ID.test(header)) return header;
  const digest = createHash('sha256')
    .update(rawBody.toString('utf8').replace(TIMESTAMP_MEMBER, '"webhookTimestamp":0'))
    .digest('hex')
    .slice(0, 32);
  const webhookId = typeof payload.webhookId === 'string' ? payload.webhookId : 'unknown';
  return `webhook:${webhookId}:${digest}`;
}

/** The digest of the exact signed bytes: the same body sent again (whatever its headers say) is the same delivery. */
export function bodyDigest(rawBody: Buffer): string {
  return createHash('sha256').update(rawBody).digest('hex');
}

function idAt(value: unknown, ...path: string[]): string | undefined {
  let node = value;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === 'string' && node ? node : undefined;
}

/**
 * Deliveries with the same key are handled one at a time, in arrival order: the agent session for AgentSessionEvent,
 * else the issue; anything else gets its own key.
 */
export function orderKey(payload: Record<string, unknown>, deliveryId: string): string {
  const session = idAt(payload, 'agentSession', 'id');
  if (session) return `session:${session}`;
  const issue =
    (payload.type === 'Issue' ? idAt(payload, 'data', 'id') : undefined) ??
    idAt(payload, 'data', 'issueId') ??
    idAt(payload, 'notification', 'issueId') ??
    idAt(payload, 'notification', 'issue', 'id');
  if (issue) return `issue:${issue}`;
  return `delivery:${deliveryId}`;
}
