import type { Generated } from 'kysely';

/** The agent engine's index tables (migrations 100–199); the JSONL logs under `<home>/engine/` are the truth. */
export interface EngineTables {
  engine_sessions: {
    id: string;
    key: string;
    type: string;
    created_at: number;
    updated_at: number;
    last_user_at: number | null;
    indexed_seq: Generated<number>;
  };
  engine_message_ids: {
    session_id: string;
    message_id: string;
    seq: number;
  };
  inbound_commands: {
    channel: string;
    message_id: string;
    text: string;
    status: 'running' | 'done';
    started_at: number;
    finished_at: number | null;
  };
}
