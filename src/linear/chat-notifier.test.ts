import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { RecordingOutbox } from '../../test/support/recording-outbox.ts';
import { loadConfig } from '../core/config-load.ts';
import type { Logger } from '../core/logger.ts';
import { OutboxNotifier, pipelineNotifyTarget } from './chat-notifier.ts';

function config(overrides: Record<string, unknown>) {
  return loadConfig({ home: '/nonexistent-home', env: {}, overrides }).config;
}

function captured(): { logger: Logger; lines: { level: number; msg: string; [k: string]: unknown }[] } {
  const lines: { level: number; msg: string }[] = [];
  return {
    logger: pino(
      { level: 'debug' },
      { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) },
    ),
    lines,
  };
}

describe('OutboxNotifier', () => {
  it('sends stuck and done notices to linear.pipeline.originChannel when it names a chat', async () => {
    const outbox = new RecordingOutbox();
    const notifier = new OutboxNotifier({
      config: config({ 'linear.pipeline.originChannel': 'telegram|42' }),
      outbox,
      logger: captured().logger,
    });
    await notifier.notify('Linear ENG-1 is stuck');
    await notifier.done('Linear ENG-2 is done');
    assert.deepEqual(outbox.sent, [
      { to: 'telegram|42', text: 'Linear ENG-1 is stuck' },
      { to: 'telegram|42', text: 'Linear ENG-2 is done' },
    ]);
  });

  it('falls back to fallbackChannel when originChannel is not a chat', async () => {
    assert.deepEqual(pipelineNotifyTarget(config({ fallbackChannel: 'web|main' })), { channel: 'web', chat: 'main' });
    const outbox = new RecordingOutbox();
    await new OutboxNotifier({
      config: config({ fallbackChannel: 'telegram|7' }),
      outbox,
      logger: captured().logger,
    }).notify('stuck');
    assert.deepEqual(outbox.to('telegram|7'), ['stuck']);
  });

  it('without any chat channel logs each notice clearly and does not fail', async () => {
    const log = captured();
    const notifier = new OutboxNotifier({ config: config({}), outbox: new RecordingOutbox(), logger: log.logger });
    assert.equal(notifier.target, null);
    await notifier.notify('Linear ENG-1 is stuck');
    assert.match(log.lines[0]?.msg ?? '', /pipeline notifications have no chat channel/);
    assert.equal(log.lines[1]?.msg, 'linear pipeline notification not delivered to chat');
    assert.equal(log.lines[1]?.text, 'Linear ENG-1 is stuck');
  });
});
