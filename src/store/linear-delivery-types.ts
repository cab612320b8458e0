// The types of a Linear webhook delivery as the domain sees it: its statuses, a stored delivery, what the intake
// stores for a new one, and the result of one of the worker's attempts.

/** pending: waiting (maybe for a retry time); processing: handed to the handler; done: handled or ignored; dead: gave up. */
export type DeliveryStatus = 'pending' | 'processing' | 'done' | 'dead';

/** One accepted webhook delivery. */
export interface StoredDelivery {
  seq: number;
  deliveryId: string;
  eventType: string;
  action: string | null;
  /** Deliveries with the same key are handled one at a time, in arrival order (agent session, issue). */
  orderKey: string;
  /** The verified JSON body as received. */
  payload: string;
  status: DeliveryStatus;
  /** Handler attempts started so far (counted when claimed, so a crash mid-handler counts too). */
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  outcome: string | null;
  receivedAt: number;
  updatedAt: number;
}

/** The result of one finished attempt. */
export type DeliveryOutcome =
  | { seq: number; kind: 'done'; outcome: string }
  | { seq: number; kind: 'retry'; error: string; retryAt: number }
  | { seq: number; kind: 'dead'; error: string };

/** What the intake stores for a new delivery. */
export interface NewDelivery {
  deliveryId: string;
  eventType: string;
  action: string | null;
  orderKey: string;
  payload: string;
  /** SHA-256 of the exact signed bytes; a second delivery with the same digest is a replay, not stored again. */
  bodyDigest: string;
  receivedAt: number;
}
