// A coding session's records are read from any node of a cluster on PostgreSQL: a session running on alpha is shown by
// beta's `sessions.output` and followed live on beta's SSE stream (records arrive through NOTIFY), and once alpha is
// SIGKILLed beta still shows everything alpha had acknowledged.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseSse } from '../../src/cli/sse.ts';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import { postgresSkip } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 30_000;

interface Output {
  lines: string[];
  lastSeq: number;
}

describe('session records from any node of a cluster', { skip: postgresSkip() }, () => {
  let rig: ClusterRig | undefined;
  const cluster = (): ClusterRig => {
    if (!rig) throw new Error('the rig did not start');
    return rig;
  };

  before(async () => {
    rig = await startClusterRig('sb-cluster-records-', [{ name: 'alpha' }, { name: 'beta' }]);
  });

  after(async () => {
    await rig?.stop();
  });

  it("shows a session of another node in `output` and streams its new records live over SSE, also after that node's death", async () => {
    const { workspace } = cluster();
    const alpha = cluster().node('alpha');
    const beta = cluster().node('beta');
    const workdir = join(workspace, 'records');
    mkdirSync(workdir, { recursive: true });
    await alpha.rpc('sessions.launch', { prompt: 'first words', name: 'far-away', workdir });
    const outputOn = (node: typeof beta): Promise<Output> =>
      node.rpc<Output>('sessions.output', { session: 'far-away' });
    await waitFor(
      'beta to show the first reply',
      async () => ((await outputOn(beta)).lines.some((l) => l.includes('REPLY to: first words')) ? true : undefined),
      LONG,
    );

    // Beta's SSE stream: the history first, then the records alpha writes from now on.
    const abort = new AbortController();
    const response = await fetch(`${beta.url}/sessions/far-away/events`, {
      headers: { authorization: `Bearer ${beta.token}` },
      signal: abort.signal,
    });
    assert.equal(response.status, 200);
    assert.ok(response.body);
    const seen: { seq: number; type: string; text?: string }[] = [];
    const reading = (async () => {
      try {
        for await (const event of parseSse(response.body as ReadableStream<Uint8Array>)) {
          seen.push(JSON.parse(event.data) as { seq: number; type: string; text?: string });
        }
      } catch (error) {
        if (!abort.signal.aborted) throw error;
      }
    })();
    await waitFor(
      'the history on the stream',
      () => (seen.some((r) => r.text?.includes('first words')) ? true : undefined),
      LONG,
    );
    await alpha.rpc('sessions.send', { session: 'far-away', message: 'second words' });
    await waitFor(
      'the live record on the stream',
      () => (seen.some((r) => r.text?.includes('REPLY to: second words')) ? true : undefined),
      LONG,
    );
    // Each record once, in order, from seq 1.
    assert.deepEqual(
      seen.map((r) => r.seq),
      seen.map((_, i) => i + 1),
    );
    abort.abort();
    await reading;

    const before = await outputOn(alpha);
    await cluster().kill('alpha');
    const after = await outputOn(beta);
    assert.ok(after.lines.some((l) => l.includes('REPLY to: second words')));
    assert.ok(after.lastSeq >= before.lastSeq, 'every record alpha acknowledged is in the database');
  });
});
