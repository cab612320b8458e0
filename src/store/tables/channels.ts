import type { Generated } from 'kysely';

/**
 * Delivery states of an outbox row: waiting (to be sent or retried), claimed for a send in flight (found after a crash:
 * the send may or may not have happened), delivered (kept only while its idempotency key must keep deduplicating;
 * unkeyed rows are deleted when sent), or given up on (dead letter).
 */
export type OutboxStatus = 'pending' | 'sending' | 'sent' | 'failed';

/** Who wrote a web transcript message: the person at the page, or the daemon (orchestrator replies, notifications). */
export type WebRole = 'user' | 'agent';

/**
 * Delivery state of a web transcript message. A user message is `pending` while the inbound handler runs, then
 * `accepted` (durably handed over) or `failed` (the page offers a retry); a daemon message is `sent`.
 */
export type WebMessageStatus = 'pending' | 'accepted' | 'failed' | 'sent';

/** Chat-channel tables (migrations 200–299): the outbox of outbound messages and the web chat transcript. */
export interface ChannelTables {
  outbox_messages: {
    id: Generated<number>;
    target_key: string;
    target: string;
    channel: string;
    text: string;
    reply_to: string | null;
    status: OutboxStatus;
    attempts: Generated<number>;
    parts_sent: Generated<number>;
    next_attempt_at: number;
    last_error: string | null;
    created_at: number;
    updated_at: number;
    dedupe_key: string | null;
    /** Rows of buttons (`ChatButton[][]` as JSON), shown under the last part; null when none. */
    buttons: string | null;
    /** Outbox key (`dedupe_key`) of an earlier message of the same conversation this one edits in place. */
    replaces: string | null;
    /** Idempotency key of an earlier message of the conversation whose thread this one goes in. */
    thread_of: string | null;
    /** The connector's id of the delivered message (its last part), kept with a keyed `sent` row for later edits. */
    ref: string | null;
    /**
     * A file sent with the message (`{ name, contentType, content, inline? }` as JSON, content at most 8 MiB of text;
     * migration 240), on its last part; null when none.
     */
    file: string | null;
  };
  web_messages: {
    pos: Generated<number>;
    version: number;
    chat_id: string;
    role: WebRole;
    text: string;
    client_id: string | null;
    status: WebMessageStatus;
    error: string | null;
    reply_to: string | null;
    created_at: number;
    updated_at: number;
    delivery_key: string | null;
    /** A daemon message's buttons: JSON rows of `{label, command}` (migration 272); null when it has none. */
    buttons: string | null;
  };
  web_counter: {
    id: number;
    version: number;
  };
}
