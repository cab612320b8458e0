import type { Generated } from 'kysely';

/** Chat-channel tables (migrations 200–299): the outbox of outbound messages and the web chat transcript. */
export interface ChannelTables {
  outbox_messages: {
    id: Generated<number>;
    target_key: string;
    target: string;
    channel: string;
    text: string;
    reply_to: string | null;
    status: string;
    attempts: Generated<number>;
    parts_sent: Generated<number>;
    next_attempt_at: number;
    last_error: string | null;
    created_at: number;
    updated_at: number;
    dedupe_key: string | null;
  };
  web_messages: {
    pos: Generated<number>;
    version: number;
    chat_id: string;
    role: string;
    text: string;
    client_id: string | null;
    status: string;
    error: string | null;
    reply_to: string | null;
    created_at: number;
    updated_at: number;
    delivery_key: string | null;
  };
  web_counter: {
    id: number;
    version: number;
  };
}
