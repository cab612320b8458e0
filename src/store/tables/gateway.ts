/** The gateway's table (migrations 500–599): idempotency keys of hooks and RPC requests. */
export interface GatewayTables {
  idempotency_keys: {
    scope: string;
    key: string;
    request_hash: string;
    /** `started` when claimed, `done` once its answer is recorded. */
    state: 'started' | 'done';
    owner: string;
    response: string | null;
    created_at: number;
    updated_at: number;
  };
}
