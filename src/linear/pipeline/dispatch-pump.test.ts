import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '../../../test/support/wait-for.ts';
import { ManualClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import { DispatchLanes } from './dispatch-lanes.ts';
import { DispatchPump } from './dispatch-pump.ts';
import type { ClaimKind } from './node-claims.ts';

const record = (id: string): DispatchRecord => ({ id }) as DispatchRecord;

function pumpOver(options: {
  queued: string[];
  running?: () => boolean;
  claims?: { pass: (cap: number, run: (d: DispatchRecord, kind: ClaimKind) => void) => Promise<void> } | null;
}) {
  const clock = new ManualClock(0);
  const logger = silentLogger();
  const queued = [...options.queued];
  const caps: number[] = [];
  const ran: string[] = [];
  const settled: string[] = [];
  const lanes = new DispatchLanes({ clock, logger, onFailure: () => {} });
  const pump = new DispatchPump({
    running: options.running ?? (() => true),
    store: {
      claimNextQueued: async (cap) => {
        caps.push(cap);
        const id = queued.shift();
        return id ? record(id) : null;
      },
    },
    claims: options.claims ? { pass: options.claims.pass, settled: (id) => void settled.push(id) } : null,
    lanes,
    clock,
    logger,
    maxConcurrent: 3,
    setup: async (id) => void ran.push(`setup ${id}`),
    takeOver: async (id) => void ran.push(`takeover ${id}`),
  });
  return { pump, lanes, caps, ran, settled };
}

describe('DispatchPump', () => {
  it('on a node alone claims queued dispatches under maxConcurrent and sets each up in its lane', async () => {
    const t = pumpOver({ queued: ['a', 'b'] });
    await t.pump.pump();
    await t.lanes.idle();
    assert.deepEqual(t.ran, ['setup a', 'setup b']);
    assert.deepEqual(t.caps, [3, 3, 3]);
  });

  it('starts nothing while the pipeline is not running', async () => {
    const t = pumpOver({ queued: ['a'], running: () => false });
    await t.pump.pump();
    assert.deepEqual(t.caps, []);
  });

  it("in a cluster runs this node's claims (queued set up, released taken over) and settles each claim", async () => {
    let passes = 0;
    const t = pumpOver({
      queued: [],
      claims: {
        pass: async (cap, run) => {
          passes += 1;
          assert.equal(cap, 3);
          if (passes > 1) return;
          run(record('q'), 'queued');
          run(record('r'), 'released');
        },
      },
    });
    await t.pump.pump();
    // Each settled claim looks for work again.
    await waitFor('both claims settled and looked for work again', () => t.settled.length === 2 && passes >= 3);
    assert.deepEqual(t.ran.toSorted(), ['setup q', 'takeover r']);
    assert.deepEqual(t.settled.toSorted(), ['q', 'r']);
    assert.deepEqual(t.caps, []);
  });
});
