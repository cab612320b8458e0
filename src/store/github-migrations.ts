import type { Migration } from './kysely/schema-kit.ts';

/**
 * Schema steps of the GitHub integration (range 700–799): the pull request each session opened (and the branch it
 * pushed, and whether switchboard created that branch), and the durable queue of GitHub webhook deliveries.
 */
export const GITHUB_MIGRATIONS: readonly Migration[] = [
  {
    version: 700,
    name: 'github: session pull requests, webhook deliveries',
    up: ({ db, int }) => [
      db.schema
        .createTable('session_pull_requests')
        .addColumn('session_id', 'text', (c) => c.primaryKey())
        .addColumn('repo', 'text', (c) => c.notNull())
        .addColumn('branch', 'text', (c) => c.notNull())
        .addColumn('base', 'text', (c) => c.notNull())
        .addColumn('branch_created', int, (c) => c.notNull().defaultTo(0))
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('number', int)
        .addColumn('url', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema.createIndex('session_pull_requests_branch').on('session_pull_requests').columns(['repo', 'branch']),
      db.schema
        .createTable('github_webhook_deliveries')
        .addColumn('delivery_id', 'text', (c) => c.primaryKey())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('action', 'text')
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', int, (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', int, (c) => c.notNull())
        .addColumn('outcome', 'text')
        .addColumn('error', 'text')
        .addColumn('received_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema
        .createIndex('github_webhook_deliveries_due')
        .on('github_webhook_deliveries')
        .columns(['status', 'next_attempt_at']),
    ],
  },
  {
    version: 701,
    name: 'github: reworks and mentions',
    up: ({ db, int }) => [
      db.schema
        .createTable('github_reworks')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('repo', 'text', (c) => c.notNull())
        .addColumn('number', int, (c) => c.notNull())
        .addColumn('session_id', 'text')
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('answer_id', int)
        .addColumn('error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('updated_at', int, (c) => c.notNull()),
      db.schema.createIndex('github_reworks_state').on('github_reworks').columns(['state']),
    ],
  },
];
