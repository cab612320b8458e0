// The real daemon process is SIGKILLed in the middle of a session and started again: the session is listed with all the
// output it had produced and its state (interrupted), and resuming it continues the same agent session.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

interface Summary {
  id: string;
  name: string;
  status: string;
  backendSessionId: string | null;
  endReason: string | null;
}
interface Output {
  session: Summary;
  lines: string[];
}

describe('SIGKILL of the daemon mid-session, then a restart', () => {
  const dir = tempDir('sb-restart-');
  const home = join(dir.path, 'home');
  const workdir = join(dir.path, 'work');
  let daemon: DaemonProcess | undefined;

  before(() => {
    mkdirSync(home, { recursive: true });
    mkdirSync(workdir, { recursive: true });
    const config = {
      workspaces: [dir.path],
      log: { level: 'warn' },
      harnesses: { claude: { executable: FAKE_CLAUDE } },
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
  });

  after(async () => {
    await killDaemonProcess(daemon);
    dir.remove();
  });

  it('loses nothing: the session comes back interrupted with its output, and resumes the same agent session', async () => {
    daemon = await startDaemonProcess(home);
    const launched = await daemon.rpc<Summary>('sessions.launch', {
      prompt: 'write many notes [[stream:40]]',
      workdir,
      name: 'notes',
    });
    const before = await waitFor('five output blocks', async () => {
      const out = await daemon?.rpc<Output>('sessions.output', { session: 'notes', full: true });
      return out && out.lines.length >= 5 ? out : undefined;
    });
    const backendId = before.session.backendSessionId;
    assert.ok(backendId, 'the agent reported its session id before the kill');

    daemon.child.kill('SIGKILL');
    const killed = await daemon.exited();
    assert.equal(killed.signal, 'SIGKILL');

    daemon = await startDaemonProcess(home);
    const listed = await daemon.rpc<{ sessions: Summary[] }>('sessions.list', {});
    const session = listed.sessions.find((s) => s.id === launched.id);
    assert.ok(session, 'the session is listed after the restart');
    assert.equal(session.status, 'interrupted');
    assert.equal(session.backendSessionId, backendId);
    const after = await daemon.rpc<Output>('sessions.output', { session: backendId, full: true });
    assert.ok(after.lines.length >= before.lines.length, 'every block seen before the kill is still there');
    assert.deepEqual(after.lines.slice(0, before.lines.length), before.lines);

    const resumed = await daemon.rpc<{ kind: string; session: Summary }>('sessions.resume', {
      session: 'notes',
      prompt: 'carry on',
    });
    assert.equal(resumed.kind, 'resumed');
    assert.equal(resumed.session.id, launched.id);
    const continued = await waitFor('the resumed turn to answer', async () => {
      const out = await daemon?.rpc<Output>('sessions.output', { session: 'notes', full: true });
      return out?.lines.some((l) => l.includes('carry on')) ? out : undefined;
    });
    assert.equal(continued.session.backendSessionId, backendId, 'resume continues the same agent session');
    assert.deepEqual(continued.lines.slice(0, before.lines.length), before.lines);

    const stats = await daemon.rpc<{ sessionsByStatus: Record<string, number> }>('sessions.stats', {});
    assert.equal(stats.sessionsByStatus.interrupted, 1, 'the cut-off run is counted as interrupted');

    daemon.child.kill('SIGTERM');
    const stopped = await daemon.exited();
    assert.equal(stopped.code, 0, daemon.output());
  });
});
