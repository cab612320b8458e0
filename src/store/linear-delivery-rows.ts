// The row mapping of `linear_webhook_deliveries`: a row as the domain sees it, and the status literals the
// deliveries' statements inline so SQLite can match them to the table's partial indexes.
import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { StoredDelivery } from './linear-delivery-types.ts';
import type { Database } from './tables/index.ts';

/** A `linear_webhook_deliveries` row as read. */
export type DeliveryRow = Selectable<Database['linear_webhook_deliveries']>;

/** Status literals are inlined (not bound) so SQLite can prove a query matches a partial index's condition. */
export const PENDING = sql.lit('pending' as const);
/** See PENDING. */
export const PROCESSING = sql.lit('processing' as const);

/** A delivery row as the domain sees it. */
export function toDelivery(row: DeliveryRow): StoredDelivery {
  return {
    seq: row.seq,
    deliveryId: row.delivery_id,
    eventType: row.event_type,
    action: row.action,
    orderKey: row.order_key,
    payload: row.payload,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    outcome: row.outcome,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
  };
}
