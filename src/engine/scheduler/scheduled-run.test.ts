import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordingEngine } from '../../../test/support/recording-engine.ts';
import { ManualClock } from '../../core/clock.ts';
import type { ScheduledPost } from './scheduled-run.ts';
import { abandonedError, postAndRecord, ScheduleTimer } from './scheduled-run.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('ScheduleTimer', () => {
  it('arms only between start() and stop(), capped at maxWaitMs, one timer at a time', () => {
    const clock = new ManualClock(T0);
    const fired: number[] = [];
    const timer = new ScheduleTimer(clock, 10_000, () => fired.push(clock.now()));
    let asked = 0;
    const at = (when: number | null) => () => {
      asked += 1;
      return when;
    };
    void timer.arm(at(T0 + 1_000));
    assert.equal(asked, 0, 'before start() the due time is not even computed');
    clock.advance(2_000);
    assert.deepEqual(fired, []);

    timer.start();
    assert.equal(timer.started, true);
    void timer.arm(at(clock.now() + 60_000));
    clock.advance(10_000);
    assert.deepEqual(fired, [T0 + 12_000], 'a far due time wakes after maxWaitMs');

    void timer.arm(at(clock.now() + 5_000));
    void timer.arm(at(clock.now() + 7_000));
    clock.advance(10_000);
    assert.deepEqual(fired, [T0 + 12_000, T0 + 19_000], 're-arming replaces the earlier timer');

    void timer.arm(at(clock.now() - 1_000));
    clock.advance(0);
    assert.deepEqual(fired, [T0 + 12_000, T0 + 19_000, T0 + 22_000], 'a past due time fires at once');

    void timer.arm(at(null));
    clock.advance(60_000);
    assert.equal(fired.length, 3, 'no due time: nothing armed');

    void timer.arm(at(clock.now() + 1_000));
    timer.stop();
    assert.equal(timer.stopped, true);
    const before = asked;
    void timer.arm(at(clock.now() + 1_000));
    clock.advance(60_000);
    assert.equal(fired.length, 3, 'stop() cancels, and arming after it does nothing');
    assert.equal(asked, before);
    assert.equal(timer.started, false);

    // Started again (the scheduler served again on this node after its lease came back): it arms and fires.
    timer.start();
    assert.deepEqual([timer.started, timer.stopped], [true, false]);
    void timer.arm(at(clock.now() + 1_000));
    clock.advance(1_000);
    assert.equal(fired.length, 4, 'a start after a stop arms again');
  });
});

describe('postAndRecord', () => {
  const post: ScheduledPost = {
    target: { type: 'cron', id: 'task-1' },
    origin: 'cron:nightly',
    prompt: 'run the checks',
    messageId: 'cron-task-1-1',
  };

  it('posts under the message id and records the acceptance (a repeat as a duplicate)', async () => {
    const engine = new RecordingEngine();
    const seen: string[] = [];
    const record = {
      accepted: (a: { duplicate: boolean; messageId: string }) =>
        `accepted ${a.messageId}${a.duplicate ? ' (duplicate)' : ''}`,
      refused: () => {
        seen.push('refused');
        return 'refused';
      },
    };
    assert.equal(await postAndRecord(engine, post, record), 'accepted cron-task-1-1');
    assert.equal(await postAndRecord(engine, post, record), 'accepted cron-task-1-1 (duplicate)');
    assert.deepEqual(seen, []);
    assert.deepEqual(
      engine.posts.map((p) => [p.via, p.descriptor.type, p.text, p.origin, p.messageId]),
      [
        ['scheduled', 'cron', 'run the checks', 'cron:nightly', 'cron-task-1-1'],
        ['scheduled', 'cron', 'run the checks', 'cron:nightly', 'cron-task-1-1'],
      ],
    );
  });

  it("gives the engine's refusal to `refused`, whose result (or throw) is the outcome", async () => {
    const engine = new RecordingEngine();
    engine.failWith = new Error('the engine is stopping');
    const result = await postAndRecord(engine, post, {
      accepted: () => 'accepted',
      refused: (error) => `refused: ${(error as Error).message}`,
    });
    assert.equal(result, 'refused: the engine is stopping');
    await assert.rejects(
      postAndRecord(engine, post, {
        accepted: () => 'accepted',
        refused: (error) => {
          throw error;
        },
      }),
      /the engine is stopping/,
    );
  });

  it('a failure to record an acceptance rejects as it is, not as a refusal', async () => {
    const engine = new RecordingEngine();
    let refused = 0;
    await assert.rejects(
      postAndRecord(engine, post, {
        accepted: () => {
          throw new Error('disk full');
        },
        refused: () => {
          refused += 1;
        },
      }),
      /disk full/,
    );
    assert.equal(refused, 0);
    assert.equal(engine.posts.length, 1, 'the engine did accept it');
  });

  it('names the attempts in the abandoned error', () => {
    assert.equal(
      abandonedError(2),
      'the daemon stopped 2 times while posting this run; not posted again (to avoid a restart loop)',
    );
  });
});
