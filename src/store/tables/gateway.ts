/** The gateway's table (migrations 500–599): idempotency keys of hooks and RPC requests. */
export interface GatewayTables {
  idempotency_keys: {
    scope: string;
    key: string;
    request_hash: string;
    state: string;
    owner: string;
    response: string | null;
    created_at: number;
    updated_at: number;
  };
}
