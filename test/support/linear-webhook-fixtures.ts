// Linear webhook fixtures (test/fixtures/linear/*.json, real payload shapes) and signing them as Linear does:
// `linear-signature` = hex HMAC-SHA256 of the raw body with the signing secret, a fresh `webhookTimestamp` in the body.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const LINEAR_FIXTURES = [
  'agent-session-created',
  'agent-session-prompted',
  'agent-session-stop',
  'comment-create-mention',
  'issue-create',
  'issue-update-delegated',
  'app-user-notification-assigned',
  'app-user-notification-mention',
] as const;
export type LinearFixtureName = (typeof LINEAR_FIXTURES)[number];

export const TEST_WEBHOOK_SECRET = 'lin_wh_test_signing_secret_0123456789';

/** A fixture payload (a fresh copy each call). */
export function linearFixture(name: LinearFixtureName): Record<string, unknown> {
  const path = join(import.meta.dirname, '..', 'fixtures', 'linear', `${name}.json`);
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

export interface SignedDelivery {
  body: string;
  headers: Record<string, string>;
  deliveryId: string;
}

export interface SignOptions {
  secret?: string;
  /** webhookTimestamp to put in the body (default: now). */
  timestamp?: number;
  /** linear-delivery header (default: a new UUID; `null` leaves the header out). */
  deliveryId?: string | null;
}

/** Signs `payload` like Linear: sets webhookTimestamp, serializes once, HMACs those exact bytes. */
export function signLinearWebhook(payload: Record<string, unknown>, options: SignOptions = {}): SignedDelivery {
  const body = JSON.stringify({ ...payload, webhookTimestamp: options.timestamp ?? Date.now() });
  const signature = createHmac('sha256', options.secret ?? TEST_WEBHOOK_SECRET)
    .update(body)
    .digest('hex');
  const deliveryId = options.deliveryId === undefined ? randomUUID() : (options.deliveryId ?? '');
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'linear-signature': signature,
    'linear-event': String(payload.type),
    'user-agent': 'Linear-Webhook',
  };
  if (options.deliveryId !== null) headers['linear-delivery'] = deliveryId;
  return { body, headers, deliveryId };
}
