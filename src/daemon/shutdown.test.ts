import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureLogger } from '../../test/support/capture-logger.ts';
import { Shutdown, STOP_ORDER } from './shutdown.ts';

describe('Shutdown', () => {
  it('runs the stops in STOP_ORDER whatever the order they were registered in, a step its own in reverse', async () => {
    const { logger } = captureLogger();
    const shutdown = new Shutdown(logger);
    const ran: string[] = [];
    shutdown.add('daemon-lock', () => void ran.push('lock'));
    shutdown.add('store', async () => void ran.push('store'));
    shutdown.add('connectors', () => void ran.push('web'));
    shutdown.add('connectors', () => void ran.push('telegram'));
    shutdown.add('cluster-node', () => void ran.push('node'));
    shutdown.add('gateway', () => void ran.push('gateway'));
    await shutdown.run();
    assert.deepEqual(ran, ['gateway', 'telegram', 'web', 'node', 'store', 'lock']);
  });

  it('logs a stop that throws and goes on with the next', async () => {
    const captured = captureLogger();
    const { logger } = captured;
    const shutdown = new Shutdown(logger);
    const ran: string[] = [];
    shutdown.add('store', () => void ran.push('store'));
    shutdown.add('sessions', () => {
      throw new Error('boom');
    });
    shutdown.add('gateway', () => void ran.push('gateway'));
    await shutdown.run();
    assert.deepEqual(ran, ['gateway', 'store']);
    assert.equal(captured.find('error', /^error while stopping$/).length, 1);
  });

  it('names every step once, the gateway first and the daemon lock last', () => {
    assert.equal(new Set(STOP_ORDER).size, STOP_ORDER.length);
    assert.equal(STOP_ORDER[0], 'gateway');
    assert.equal(STOP_ORDER.at(-1), 'daemon-lock');
  });
});
