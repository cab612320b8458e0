/** The GitHub integration's tables (migrations 700–799). */
export interface GithubTables {
  /** The pull request of a session: recorded `pending` before the branch is made, `opened` once the PR is known. */
  session_pull_requests: {
    session_id: string;
    /** `owner/name`. */
    repo: string;
    branch: string;
    base: string;
    /** 1 when switchboard created the branch (only such a branch may be force-pushed). */
    branch_created: number;
    state: 'pending' | 'opened';
    number: number | null;
    url: string | null;
    created_at: number;
    updated_at: number;
  };
  /** Verified GitHub webhook deliveries: the dedup set (by `X-GitHub-Delivery`) and the worker's queue. */
  github_webhook_deliveries: {
    delivery_id: string;
    event: string;
    action: string | null;
    payload: string;
    status: 'pending' | 'processing' | 'done' | 'dead';
    attempts: number;
    next_attempt_at: number;
    outcome: string | null;
    error: string | null;
    received_at: number;
    updated_at: number;
  };
  /**
   * What a review, review comment or mention set off, keyed by `review:<id>`, `comment:<id>` or `mention:<id>` (each
   * acted on once across redeliveries and restarts): the session it ran in and where its answer went.
   */
  github_reworks: {
    key: string;
    kind: 'rework' | 'mention';
    /** `owner/name`. */
    repo: string;
    /** The pull request or issue number the answer goes to. */
    number: number;
    session_id: string | null;
    prompt: string;
    /** `queued` (turn not yet started), `running`, `finishing` (turn ended: push and answer owed), `done`, `failed`. */
    state: 'queued' | 'running' | 'finishing' | 'done' | 'failed';
    /** The id of the comment that answered, once posted. */
    answer_id: number | null;
    error: string | null;
    created_at: number;
    updated_at: number;
  };
}
