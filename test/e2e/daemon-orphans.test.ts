// Agent processes end with the daemon: the real daemon process is SIGKILLed while agents (the fake Claude and Codex
// CLIs, stuck mid-turn) run; the orphan guard stops them within a bounded time, without waiting for a restart, also
// when they ignore SIGTERM. The next start reports what remained of the last daemon.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const FAKE_CODEX = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));
const LINUX = process.platform === 'linux';

interface Summary {
  id: string;
  name: string;
  status: string;
}

/** Pids of live processes whose environment carries the session tag (what the daemon sets on every agent). */
function agentPids(sessionId: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`SWITCHBOARD_SESSION_ID=${sessionId}`) &&
        alive(Number(entry))
      ) {
        pids.push(Number(entry));
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** A process that exists and is not a zombie (an exited orphan waiting for init to reap it counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

for (const stubborn of [false, true]) {
  describe(
    `SIGKILL of the daemon with agents running${stubborn ? ' that ignore SIGTERM' : ''}`,
    { skip: !LINUX && 'needs /proc' },
    () => {
      const dir = tempDir('sb-orphans-');
      const home = join(dir.path, 'home');
      const workdir = join(dir.path, 'work');
      let daemon: DaemonProcess | undefined;
      const leftovers: number[] = [];

      after(async () => {
        for (const pid of leftovers) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        await killDaemonProcess(daemon);
        dir.remove();
      });

      it('stops the agents within a bounded time, and the next start reports that none remained', async () => {
        mkdirSync(home, { recursive: true });
        mkdirSync(workdir, { recursive: true });
        const env = stubborn ? { FAKE_IGNORE_SIGTERM: '1' } : {};
        const config = {
          workspaces: [dir.path],
          log: { level: 'info' },
          harnesses: { claude: { executable: FAKE_CLAUDE, env }, codex: { executable: FAKE_CODEX, env } },
        };
        writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
        const running = await startDaemonProcess(home);
        daemon = running;
        const sessions = await Promise.all(
          (['claude', 'codex'] as const).map((harness) =>
            running.rpc<Summary>('sessions.launch', {
              prompt: 'think forever [[hang]]',
              workdir,
              harness,
              name: `stuck-${harness}`,
            }),
          ),
        );
        const pids = new Map<string, number[]>();
        for (const s of sessions) {
          assert.ok(s);
          // Running: the agent has reported its session, so it is well into its (endless) turn.
          await waitFor(
            `${s.name} to run`,
            async () => (await daemon?.rpc<Summary>('sessions.get', { session: s.id }))?.status === 'running',
          );
          const found = await waitFor(`the ${s.name} agent process`, () => {
            const p = agentPids(s.id);
            return p.length > 0 ? p : undefined;
          });
          pids.set(s.name, found);
          leftovers.push(...found);
        }

        daemon.child.kill('SIGKILL');
        await daemon.exited();
        const killedAt = Date.now();
        // SIGTERM at once; SIGKILL after the guard's 2 s grace for agents that ignore SIGTERM.
        for (const [name, list] of pids) {
          await waitFor(`the ${name} agent to end with the daemon`, () => list.every((pid) => !alive(pid)), 8_000);
        }
        const tookMs = Date.now() - killedAt;
        assert.ok(tookMs < 8_000, `agents ended ${tookMs} ms after the daemon`);

        daemon = await startDaemonProcess(home);
        const restarted = daemon;
        await waitFor('the orphan report', () =>
          restarted.output().includes('no agent process outlived the last daemon'),
        );
        const listed = await daemon.rpc<{ sessions: Summary[] }>('sessions.list', {});
        assert.deepEqual(
          listed.sessions.map((s) => s.status),
          ['interrupted', 'interrupted'],
        );
      });
    },
  );
}
