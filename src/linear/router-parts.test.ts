// Unit tests of the router's small parts, each over fakes of only what it uses: event-failures (retry, report once,
// already reported), notification-routing (assignment, delayed mention job, nothing) and router-prune (at start and on
// the timer, never throwing).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureLogger } from '../../test/support/capture-logger.ts';
import { FAKE_IDS } from '../../test/support/fake-linear.ts';
import type { LinearFixtureName } from '../../test/support/linear-webhook-fixtures.ts';
import { linearFixture } from '../../test/support/linear-webhook-fixtures.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { loadConfig } from '../core/config-load.ts';
import { AppError } from '../core/errors.ts';
import type { AssignmentSource } from '../store/linear-claims.ts';
import type { LinearJob, NewJob } from '../store/linear-jobs.ts';
import { LinearApiError } from './api/types.ts';
import type { EventFailureDeps } from './event-failures.ts';
import { AlreadyReported, reportEventFailure } from './event-failures.ts';
import { NotificationRouting } from './notification-routing.ts';
import { RouterPrune } from './router-prune.ts';
import type { LinearEvent } from './webhooks/events.ts';
import { parseLinearEvent } from './webhooks/parse.ts';

/** The daemon's config with these dotted overrides of its `linear` section (and a key, so Linear is on). */
function config(linear: Record<string, unknown> = {}): Config {
  const dir = tempDir('sb-router-parts-');
  try {
    const overrides = Object.fromEntries(Object.entries(linear).map(([k, v]) => [`linear.${k}`, v]));
    return loadConfig({ home: dir.path, env: {}, overrides: { 'linear.apiKey': 'lin_api_fake', ...overrides } }).config;
  } finally {
    dir.remove();
  }
}

async function event(name: LinearFixtureName, change?: (p: Record<string, unknown>) => void): Promise<LinearEvent> {
  const payload = linearFixture(name);
  change?.(payload);
  const parsed = await parseLinearEvent(payload, { deliveryId: 'delivery-1', appUserId: async () => FAKE_IDS.appUser });
  if (parsed.kind !== 'event') throw new Error(`${name} does not parse to an event`);
  return parsed.event;
}

/** Linear and the ledger as reportEventFailure uses them: records what was sent, under which effect key. */
function fakes(): Omit<EventFailureDeps, 'logger'> & { sent: string[]; keys: string[] } {
  const sent: string[] = [];
  const keys: string[] = [];
  return {
    sent,
    keys,
    api: {
      createAgentActivity: async (s, c) => {
        sent.push(`activity ${s} ${c.type}: ${'body' in c ? c.body : ''}`);
        return { id: 'a1' };
      },
      createComment: async (i, b, o) => {
        sent.push(`comment ${i} (${o?.parentId ?? '-'}): ${b}`);
        return { id: 'c1' };
      },
    },
    effects: {
      run: async (key, _mode, send) => {
        keys.push(key);
        return { kind: 'sent', value: await send(`id:${key}`) };
      },
    },
  };
}

describe('reportEventFailure', () => {
  it('throws a failure that may pass again (the delivery is retried) and tells nothing', async () => {
    const f = fakes();
    const log = captureLogger();
    const logger = log.logger;
    const e = await event('agent-session-created');
    const cause = new LinearApiError('network', 'socket hang up');
    await assert.rejects(reportEventFailure({ ...f, logger }, e, new AlreadyReported(cause)), (err) => err === cause);
    assert.deepEqual(f.sent, []);
    assert.equal(log.find('warn', /the delivery will be retried/).length, 1);
  });

  it('tells a final failure once in the agent session, keyed by the event', async () => {
    const f = fakes();
    const log = captureLogger();
    const logger = log.logger;
    const e = await event('agent-session-created');
    await reportEventFailure({ ...f, logger }, e, new AppError('invalid_input', 'no repository'));
    assert.equal(f.sent.length, 1);
    assert.match(f.sent[0] ?? '', /activity .* error: switchboard could not handle this: no repository/);
    assert.deepEqual(f.keys, [`created:${e.type === 'agentSession.created' ? e.agentSessionId : ''}/failed`]);
    assert.equal(log.find('error', /^linear event handling failed$/).length, 1);
  });

  it('replies in the comment thread for a comment, and says nothing of what the pipeline already reported', async () => {
    const f = fakes();
    const { logger } = captureLogger();
    const comment = await event('comment-create-mention');
    await reportEventFailure({ ...f, logger }, comment, new AppError('invalid_input', 'bad'));
    assert.equal(f.sent.length, 1);
    assert.match(f.sent[0] ?? '', /^comment .*: switchboard could not handle this: bad$/);
    const created = await event('agent-session-created');
    await reportEventFailure({ ...f, logger }, created, new AlreadyReported(new AppError('invalid_input', 'refused')));
    assert.equal(f.sent.length, 1);
  });
});

/** A job as the store returns it when queued. */
function stored(job: NewJob): LinearJob {
  return {
    seq: 1,
    key: job.key,
    kind: job.kind,
    serialKey: job.serialKey,
    agentSessionId: job.agentSessionId ?? null,
    payload: job.payload,
    status: 'queued',
    attempts: 0,
    nextAt: job.runAt ?? 0,
    lastError: null,
    createdAt: 0,
    updatedAt: 0,
  };
}

describe('NotificationRouting', () => {
  function routing(): {
    r: NotificationRouting;
    assigned: [string, AssignmentSource, string][];
    jobs: NewJob[];
    clock: ManualClock;
  } {
    const assigned: [string, AssignmentSource, string][] = [];
    const jobs: NewJob[] = [];
    const clock = new ManualClock(1_000_000);
    const r = new NotificationRouting({
      config: config({ 'mentions.notificationDelaySec': 30 }),
      jobs: {
        async enqueue(job) {
          jobs.push(job);
          return { job: stored(job), created: true };
        },
      },
      assigned: async (...args) => void assigned.push(args),
      clock,
      logger: captureLogger().logger,
    });
    return { r, assigned, jobs, clock };
  }

  it('takes "assigned to you" over as the notification report of the assignment', async () => {
    const { r, assigned, jobs } = routing();
    const e = await event('app-user-notification-assigned');
    assert.equal(e.type, 'appUserNotification');
    if (e.type !== 'appUserNotification') return;
    await r.route(e);
    assert.deepEqual(assigned, [[e.issue?.id, 'notification', 'delivery-1']]);
    assert.deepEqual(jobs, []);
  });

  it('queues a mention as a job due after the notification delay', async () => {
    const { r, jobs, clock } = routing();
    const e = await event('app-user-notification-mention');
    if (e.type !== 'appUserNotification') throw new Error('not a notification');
    await r.route(e);
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]?.key, `notification-mention:${e.comment?.id}`);
    assert.equal(jobs[0]?.runAt, clock.now() + 30_000);
  });
  it('needs nothing for the other kinds (no job, no assignment)', async () => {
    const { r, assigned, jobs } = routing();
    const e = await event('app-user-notification-mention', (p) => {
      p.action = 'issueStatusChanged';
    });
    if (e.type !== 'appUserNotification') throw new Error('not a notification');
    await r.route(e);
    assert.deepEqual(assigned, []);
    assert.deepEqual(jobs, []);
  });
});

describe('RouterPrune', () => {
  it('prunes what is older than retentionSec at start and on each interval, and a failure is logged, not thrown', async () => {
    const clock = new ManualClock(10_000_000);
    const befores: number[] = [];
    let fail = false;
    const prune = async (before: number): Promise<number> => {
      if (fail) throw new Error('database is locked');
      befores.push(before);
      return 1;
    };
    const log = captureLogger();
    const logger = log.logger;
    const p = new RouterPrune({
      config: config({ 'router.retentionSec': 100, 'router.pruneIntervalSec': 60 }),
      claims: { prune },
      jobStore: { prune },
      effects: { prune },
      clock,
      logger,
    });
    await p.start();
    assert.deepEqual(befores, [9_900_000, 9_900_000, 9_900_000]);
    assert.equal(log.find('info', /pruned old claims and jobs/)[0]?.removed, 3);
    fail = true;
    await p.prune();
    assert.equal(log.find('error', /prune failed/).length, 1);
    fail = false;
    clock.advance(60_000);
    await waitFor('the interval prune', () => befores.length === 6);
    assert.equal(befores[5], 9_960_000);
    p.stop();
    clock.advance(120_000);
    await p.prune();
    assert.equal(befores.length, 9, 'only the explicit prune ran after stop()');
  });
});
