import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lateToolbox } from './late-toolbox.ts';
import type { AgentToolbox } from './toolbox.ts';

const session = { id: 's1', descriptor: { type: 'heartbeat' as const } };
const echo: AgentToolbox = {
  tools: () => [{ name: 'echo', description: 'echo', inputSchema: { type: 'object' } }],
  run: async (call) => ({ text: `echo ${call.name}`, isError: false }),
};

describe('lateToolbox', () => {
  it('refuses use before it is bound, forwards after, and binds only once', async () => {
    const box = lateToolbox();
    assert.throws(() => box.tools(session), /not bound yet/);
    box.bind(echo);
    assert.deepEqual(
      box.tools(session).map((t) => t.name),
      ['echo'],
    );
    assert.deepEqual(await box.run({ id: 'c1', name: 'echo', input: {} }, session), {
      text: 'echo echo',
      isError: false,
    });
    assert.throws(() => box.bind(echo), /already bound/);
  });
});
