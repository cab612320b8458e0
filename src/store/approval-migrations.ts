import type { Migration } from './kysely/schema-kit.ts';

/** Schema steps of approvals (range 600–699): requests, decided once by a compare-and-swap on `status`, and rules. */
export const APPROVAL_MIGRATIONS: readonly Migration[] = [
  {
    version: 600,
    name: 'approvals: requests and rules',
    up: ({ db, int }) => [
      db.schema
        .createTable('approvals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('session_name', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('input', 'text', (c) => c.notNull())
        .addColumn('summary', 'text', (c) => c.notNull())
        .addColumn('questions', 'text', (c) => c.notNull())
        .addColumn('root', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('scope', 'text')
        .addColumn('decided_by', 'text')
        .addColumn('message', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('decided_at', int)
        .addColumn('expires_at', int, (c) => c.notNull()),
      db.schema.createIndex('approvals_session').on('approvals').columns(['session_id', 'created_at']),
      db.schema.createIndex('approvals_status').on('approvals').columns(['status', 'created_at']),
      db.schema
        .createTable('approval_rules')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('rule', 'text', (c) => c.notNull())
        .addColumn('behavior', 'text', (c) => c.notNull())
        .addColumn('root', 'text')
        .addColumn('session_id', 'text')
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull()),
      db.schema.createIndex('approval_rules_session').on('approval_rules').column('session_id'),
    ],
  },
];
