// Crash tests of idempotency keys on the real daemon: a keyed request is killed after its effect and before its answer
// was stored or sent (fault points `hooks.wake.after-deliver` and `idempotency.before-complete`), or inside the one
// transaction of a queued heartbeat event and its answer (`hooks.wake.before-commit`), so the client never hears back;
// its repeat after the restart answers as the first run did and runs nothing twice.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CrashRig } from '../support/crash-rig.ts';
import { RIG_USER, withCrashRig } from '../support/crash-rig.ts';
import { systemText, textsTo } from '../support/e2e-daemon.ts';
import type { ChatBody } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText } from '../support/mock-openai-chat.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;
const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

/** POST /hooks/wake with the hooks token and an Idempotency-Key header. */
async function hook(
  rig: CrashRig,
  key: string,
  body: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const token = readFileSync(join(rig.home, 'hooks.token'), 'utf8').trim();
  const res = await fetch(`${rig.daemon.url}/hooks/wake`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("SIGKILL of the daemon between a keyed request's effect and its answer", { concurrency: true }, () => {
  it('POST /hooks/wake: the repeat after the restart answers with the same message, and the engine accepts it once', async () => {
    const handler = (body: ChatBody) => {
      const text = lastUserText(body);
      return chatText(text.includes('deploy 7 finished') ? 'woken: deploy 7 finished' : `answer to: ${text}`);
    };
    await withCrashRig('sb-crash-idem-hook-', handler, { hooks: { enabled: true } }, async (rig) => {
      const { telegram } = rig;
      await rig.start({ SWITCHBOARD_FAULT: 'hooks.wake.after-deliver' });
      // A user session for the wake to reach.
      telegram.pushMessage({ fromId: RIG_USER, text: 'hi' });
      await waitFor('the first answer', () => textsTo(telegram, RIG_USER).includes('answer to: hi'), LONG);
      const lost = await hook(rig, 'deploy-7', { text: 'deploy 7 finished' }).catch((error: unknown) => error);
      assert.ok(lost instanceof Error, 'the first request got no answer');
      await rig.crashed('hooks.wake.after-deliver');

      await rig.start();
      const repeat = await hook(rig, 'deploy-7', { text: 'deploy 7 finished' });
      assert.equal(repeat.status, 200, JSON.stringify(repeat.json));
      assert.equal(repeat.json.duplicate, true, 'the engine had the first delivery already');
      const again = await hook(rig, 'deploy-7', { text: 'deploy 7 finished' });
      assert.deepEqual(again.json, repeat.json, 'a further repeat gets the stored answer');
      const other = await hook(rig, 'deploy-7', { text: 'deploy 8 finished' });
      assert.equal(other.status, 422);
      // The first delivery's turn began before the kill (it is closed as cut off); the repeat queued no second one.
      await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
      await waitFor(
        'the engine to be idle',
        async () => {
          const { sessions } = await rig.daemon.rpc<{ sessions: { state: string; queued: number }[] }>(
            'engine.sessions',
            {},
          );
          return sessions.every((s) => s.state === 'idle' && s.queued === 0);
        },
        LONG,
      );
      const woken = rig.model
        .completionRequests()
        .filter((r) => lastUserText(r.body as ChatBody).includes('deploy 7 finished'));
      assert.ok(woken.length <= 1, 'the orchestrator ran at most the one turn of the first delivery');
      assert.ok(woken.every((r) => systemText(r.body as ChatBody).includes(`telegram|${RIG_USER}`)));
      assert.ok(
        textsTo(telegram, RIG_USER).filter((t) => t === 'woken: deploy 7 finished' || t === 'Internal error.').length <=
          1,
        'the wake is answered at most once',
      );
      await rig.stop();
    });
  });

  it('POST /hooks/wake next-heartbeat: killed before the event and the answer commit, the repeat queues the event once', async () => {
    // A heartbeat timer (so there is a next heartbeat to queue for) that never fires during the test.
    await withCrashRig(
      'sb-crash-idem-hb-',
      () => chatText('unused'),
      { hooks: { enabled: true }, heartbeat: { intervalMinutes: 600 } },
      async (rig) => {
        await rig.start({ SWITCHBOARD_FAULT: 'hooks.wake.before-commit' });
        const body = { text: 'nightly backup failed', mode: 'next-heartbeat' };
        const lost = await hook(rig, 'backup-1', body).catch((error: unknown) => error);
        assert.ok(lost instanceof Error, 'the first request got no answer');
        await rig.crashed('hooks.wake.before-commit');

        await rig.start();
        const pending = async () =>
          (await rig.daemon.rpc<{ status: { pendingEvents: number } }>('heartbeat.list', {})).status.pendingEvents;
        assert.equal(await pending(), 0, 'the event went with the uncommitted answer');
        const repeat = await hook(rig, 'backup-1', body);
        assert.equal(repeat.status, 200, JSON.stringify(repeat.json));
        assert.equal(repeat.json.mode, 'next-heartbeat');
        const again = await hook(rig, 'backup-1', body);
        assert.deepEqual(again.json, repeat.json, 'a further repeat gets the stored answer');
        assert.equal(await pending(), 1, 'queued once');
        await rig.stop();
      },
    );
  });

  it('sessions.launch: the repeat after the restart answers with the same session, and only one was launched', async () => {
    await withCrashRig(
      'sb-crash-idem-launch-',
      () => chatText('unused'),
      {},
      async (rig) => {
        const workdir = join(rig.root, 'work');
        mkdirSync(workdir, { recursive: true });
        rig.configure({ harnesses: { claude: { executable: FAKE_CLAUDE } } });
        await rig.start({ SWITCHBOARD_FAULT: 'idempotency.before-complete' });
        const params = {
          prompt: '[[hang]] fix the build',
          name: 'build-fix',
          workdir,
          idempotencyKey: 'launch-build-fix-1',
        };
        const lost = await rig.daemon.rpc('sessions.launch', params).catch((error: unknown) => error);
        assert.ok(lost instanceof Error, 'the first launch got no answer');
        await rig.crashed('idempotency.before-complete');

        await rig.start();
        const repeat = await rig.daemon.rpc<{ id: string; name: string }>('sessions.launch', params);
        assert.equal(repeat.name, 'build-fix');
        const { sessions } = await rig.daemon.rpc<{ sessions: { id: string; name: string }[] }>('sessions.list', {});
        assert.deepEqual(
          sessions.map((s) => s.id),
          [repeat.id],
          'one session, the one the repeat names',
        );
        await assert.rejects(
          rig.daemon.rpc('sessions.launch', { ...params, prompt: 'something else' }),
          /already used for a different request/,
        );
        await rig.stop();
      },
    );
  });
});
