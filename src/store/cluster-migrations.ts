import type { Compilable } from 'kysely';
import { CompiledQuery } from 'kysely';
import type { Migration } from './kysely/schema-kit.ts';

/** One statement of raw SQL as a migration step (for what the schema builder lacks: PostgreSQL triggers). */
function raw(text: string): Compilable {
  return { compile: () => CompiledQuery.raw(text) };
}

/**
 * PostgreSQL: a trigger that sends `NOTIFY <channel>` (empty payload) once per statement inserting into `table`, inside
 * the inserting transaction (so it is sent only on commit), whichever node wrote the rows.
 */
function notifyOnInsert(table: string, channel: string): Compilable[] {
  const fn = `switchboard_notify_${table}`;
  return [
    raw(
      `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('${channel}', ''); RETURN NULL; END $$`,
    ),
    raw(`CREATE TRIGGER ${fn} AFTER INSERT ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`),
  ];
}

/** NOTIFY channel of migration 850: a Linear dispatch was inserted or changed status or node (empty payload). */
export const LINEAR_DISPATCH_CHANNEL = 'switchboard_linear_dispatch';

/** Schema steps of the cluster (range 800–899): nodes and their heartbeats, singleton leases, shared secrets. */
export const CLUSTER_MIGRATIONS: readonly Migration[] = [
  {
    version: 800,
    name: 'cluster: nodes, leases, shared secrets',
    up: ({ db, int }) => [
      db.schema
        .createTable('cluster_nodes')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('incarnation', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('harnesses', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('workspaces', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('max_sessions', int, (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('started_at', int, (c) => c.notNull())
        .addColumn('heartbeat_at', int, (c) => c.notNull())
        .addColumn('down_at', int)
        .addColumn('taken_over_at', int),
      db.schema
        .createTable('cluster_leases')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('incarnation', 'text', (c) => c.notNull())
        .addColumn('expires_at', int, (c) => c.notNull())
        .addColumn('acquired_at', int, (c) => c.notNull()),
      db.schema
        .createTable('cluster_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', int, (c) => c.notNull()),
    ],
  },
  {
    version: 820,
    name: 'cluster: commands for a session on another node',
    up: ({ db, int }) => [
      db.schema
        .createTable('cluster_commands')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('result', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('claimed_at', int)
        .addColumn('claimed_by', 'text')
        .addColumn('finished_at', int),
      db.schema
        .createIndex('cluster_commands_target')
        .on('cluster_commands')
        .columns(['target', 'status', 'created_at']),
    ],
  },
  {
    version: 840,
    name: 'cluster: log records written through to the database; outbox and wake notifications',
    up: ({ db, int, dialect, withoutRowid }) => [
      withoutRowid(
        db.schema
          .createTable('log_records')
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('log', 'text', (c) => c.notNull())
          .addColumn('seq', int, (c) => c.notNull())
          .addColumn('ts', int, (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('log_records_pk', ['kind', 'log', 'seq']),
      ),
      ...(dialect === 'postgres'
        ? [
            ...notifyOnInsert('outbox_messages', 'switchboard_outbox'),
            ...notifyOnInsert('wake_events', 'switchboard_wake'),
          ]
        : []),
    ],
  },
  {
    version: 841,
    name: 'cluster: engine calls routed to the node serving the engine',
    up: ({ db, int, serial }) => [
      db.schema
        .createTable('engine_calls')
        .addColumn('id', int, (c) => serial(c))
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('args', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('claimed_by', 'text')
        .addColumn('result', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', int, (c) => c.notNull())
        .addColumn('done_at', int),
      db.schema.createIndex('engine_calls_status').on('engine_calls').columns(['status', 'id']),
    ],
  },
  {
    version: 850,
    name: 'cluster: Linear dispatches queued, released or finished wake the nodes',
    up: ({ dialect }) =>
      dialect === 'postgres'
        ? [
            raw(
              `CREATE OR REPLACE FUNCTION switchboard_notify_linear_dispatches() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('${LINEAR_DISPATCH_CHANNEL}', ''); RETURN NULL; END $$`,
            ),
            raw(
              `CREATE TRIGGER switchboard_notify_linear_dispatches AFTER INSERT OR UPDATE OF status, node ON linear_dispatches FOR EACH STATEMENT EXECUTE FUNCTION switchboard_notify_linear_dispatches()`,
            ),
          ]
        : [],
  },
];
