import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { StoreManagerFixture } from '../../test/support/manager-on-store.ts';
import { openManagerFixture } from '../../test/support/manager-on-store.ts';
import { RecordingEngine } from '../../test/support/recording-engine.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { silentLogger } from '../core/logger.ts';
import type { Scheduler } from '../engine/scheduler/scheduler.ts';
import { createScheduler } from '../engine/scheduler/scheduler.ts';
import { createWakeRouter } from '../engine/wake/wake-router.ts';
import { runCommand } from './commands.ts';
import type { Caller, OperationServices } from './operation.ts';
import { rpcMethods } from './rpc-methods.ts';
import { OPERATIONS } from './table.ts';
import { runTool } from './tools.ts';

const chat: Caller = { kind: 'chat', channel: 'telegram|42', userId: '42' };
const agent: Caller = { kind: 'agent', sessionId: 'eng-1' };

describe('cron and heartbeat operations', () => {
  let f: StoreManagerFixture;
  let engine: RecordingEngine;
  let scheduler: Scheduler;
  let services: OperationServices;

  beforeEach(async () => {
    f = await openManagerFixture((path) => openTestStore(path), { 'scheduler.timezone': 'UTC' });
    engine = new RecordingEngine();
    scheduler = createScheduler({
      db: f.db,
      engine,
      clock: f.clock,
      logger: silentLogger(),
      config: f.config,
    });
    await scheduler.start();
    const wake = createWakeRouter({
      db: f.db,
      sessions: f.manager,
      engine,
      clock: f.clock,
      logger: silentLogger(),
      config: f.config,
    });
    services = { config: f.config, sessions: f.manager, clock: f.clock, scheduler, wake };
  });
  afterEach(async () => {
    await scheduler.stop();
    await f.close();
  });

  it('adds, lists, disables and removes cron tasks from chat, tools and RPC', async () => {
    const added = await runCommand(
      OPERATIONS,
      '/cron_add --timezone UTC daily "0 9 * * *" Summarize the new issues',
      chat,
      services,
    );
    assert.match(
      added ?? '',
      /Cron task added\n⏰ daily \[\w+\] — 0 9 \* \* \* \(UTC\)\n {3}📝 "Summarize the new issues"\n {3}⏭️ next: 2026-01-01T09:00:00.000Z/,
    );

    const bad = await runTool(OPERATIONS, 'cron_add', { name: 'x', schedule: '0 9 * *', prompt: 'p' }, agent, services);
    assert.equal(bad.isError, true);
    assert.match(bad.text, /^schedule: "0 9 \* \*" has 4 fields/);
    const unknown = await runTool(
      OPERATIONS,
      'cron_add',
      { name: 'x', schedule: '@daily', prompt: 'p', every: 3 },
      agent,
      services,
    );
    assert.match(unknown.text, /unknown parameter every/);

    const methods = rpcMethods(OPERATIONS);
    const listed = (await methods.get('cron.list')?.call({}, { kind: 'rpc' }, services)) as {
      tasks: { name: string; nextRunAt: number }[];
    };
    assert.deepEqual(
      listed.tasks.map((t) => t.name),
      ['daily'],
    );
    f.clock.advance(1);
    await runTool(OPERATIONS, 'cron_add', { name: 'weekly', schedule: '@weekly', prompt: 'p' }, agent, services);
    const newest = (await methods.get('cron.list')?.call({ limit: 1 }, { kind: 'rpc' }, services)) as {
      tasks: { name: string }[];
      nextCursor: string | null;
    };
    const older = (await methods
      .get('cron.list')
      ?.call({ limit: 1, cursor: newest.nextCursor }, { kind: 'rpc' }, services)) as {
      tasks: { name: string }[];
      nextCursor: string | null;
    };
    assert.deepEqual(
      [newest.tasks.map((t) => t.name), older.tasks.map((t) => t.name), older.nextCursor],
      [['weekly'], ['daily'], null],
    );
    assert.match(
      (await runCommand(OPERATIONS, '/cron_list --limit 1', chat, services)) ?? '',
      /weekly[\s\S]*… more: ask again with cursor \S+$/,
    );
    await runTool(OPERATIONS, 'cron_remove', { task: 'weekly' }, agent, services);
    const off = await runTool(OPERATIONS, 'cron_disable', { task: 'daily' }, agent, services);
    assert.match(off.text, /⏸️ daily .*disabled\n[\s\S]*next: off/);
    f.clock.advance(10 * 3_600_000);
    await scheduler.cron.idle();
    assert.equal(engine.posts.length, 0);
    assert.match(
      (await runCommand(OPERATIONS, '/cron_enable daily', chat, services)) ?? '',
      /next: 2026-01-02T09:00:00.000Z/,
    );
    assert.match(
      (await runCommand(OPERATIONS, '/cron_remove daily', chat, services)) ?? '',
      /Cron task daily \[\w+\] removed/,
    );
    assert.match((await runCommand(OPERATIONS, '/cron_remove daily', chat, services)) ?? '', /no cron task "daily"/);
    assert.equal(await runCommand(OPERATIONS, '/cron_list', chat, services), 'No cron tasks. Add one with cron_add.');
  });

  it('manages heartbeat tasks, runs the heartbeat on request and reports the scheduler status', async () => {
    assert.match(
      (await runCommand(OPERATIONS, '/heartbeat_add "Check CI" Look at failing builds', chat, services)) ?? '',
      /Heartbeat task added: Check CI/,
    );
    const list = await runTool(OPERATIONS, 'heartbeat_list', {}, agent, services);
    assert.match(
      list.text,
      /💓 Heartbeat: every 30 min, next 2026-01-01T00:30:00.000Z · last run never · 1 task · 0 queued events\n\n1\. Check CI/,
    );
    assert.match(
      (await runCommand(OPERATIONS, '/heartbeat_run deploy is done', chat, services)) ?? '',
      /Heartbeat run posted to session heartbeat: 1 task, 0 queued events/,
    );
    assert.match(engine.posts[0]?.text ?? '', /### 1\. Check CI[\s\S]*### Event 1 \(manual, .+\)\n\ndeploy is done/);
    assert.match(
      (await runTool(OPERATIONS, 'heartbeat_remove', { title: 'Check CI' }, agent, services)).text,
      /removed/,
    );
    const status = await runTool(OPERATIONS, 'scheduler_status', {}, agent, services);
    assert.match(status.text, /⏰ Cron: 0 tasks \(0 enabled\), next run never · missed runs after downtime: run-once/);
    assert.match(status.text, /last run 2026-01-01T00:00:00.000Z \(manual\) · 0 tasks/);
    assert.match(
      status.text,
      /🔔 Wakes since start: 0 delivered, 0 undelivered, 0 debounced, 0 failed attempts · 0 pending/,
    );
  });

  it('answers unavailable when the daemon runs without a scheduler', async () => {
    const bare: OperationServices = { config: f.config, sessions: f.manager, clock: f.clock };
    const result = await runTool(OPERATIONS, 'cron_list', {}, agent, bare);
    assert.equal(result.isError, true);
    assert.match(result.text, /scheduler is not running/);
  });
});
