import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { InboundCommandStore } from './inbound-commands.ts';

const DAY = 24 * 3_600_000;

describeEachDatabase('InboundCommandStore', (fresh) => {
  test('a command is new once, running until finished, then done; per channel and message id', async () => {
    const commands = new InboundCommandStore((await fresh()).db);
    assert.equal(await commands.begin('telegram|42', 'm1', '/claude_kill x', 1_000), 'new');
    assert.equal(await commands.begin('telegram|42', 'm1', '/claude_kill x', 2_000), 'running');
    assert.equal(await commands.begin('telegram|7', 'm1', '/claude_kill x', 2_000), 'new');
    await commands.finish('telegram|42', 'm1', 3_000);
    assert.equal(await commands.begin('telegram|42', 'm1', '/claude_kill x', 4_000), 'done');
  });

  test('a new command forgets records older than a week', async () => {
    const commands = new InboundCommandStore((await fresh()).db);
    assert.equal(await commands.begin('telegram|42', 'old', '/x', 1_000), 'new');
    assert.equal(await commands.begin('telegram|42', 'new', '/x', 1_000 + 7 * DAY + 1), 'new');
    assert.equal(
      await commands.begin('telegram|42', 'old', '/x', 1_000 + 7 * DAY + 2),
      'new',
      'the old record was dropped',
    );
  });
});
