import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedSerial } from './keyed-serial.ts';

describe('KeyedSerial', () => {
  it('runs the work of one key in the order asked, each after the last settled, and other keys meanwhile', async () => {
    const serial = new KeyedSerial<string>();
    const log: string[] = [];
    const first = Promise.withResolvers<void>();
    const a1 = serial.run('a', async () => {
      log.push('a1 start');
      await first.promise;
      log.push('a1 end');
      return 1;
    });
    const a2 = serial.run('a', async () => {
      log.push('a2');
      return 2;
    });
    const b1 = serial.run('b', async () => {
      log.push('b1');
      return 3;
    });
    assert.equal(await b1, 3);
    assert.deepEqual(log, ['a1 start', 'b1'], 'b ran while a1 was still running; a2 waited');
    first.resolve();
    assert.deepEqual(await Promise.all([a1, a2]), [1, 2]);
    assert.deepEqual(log, ['a1 start', 'b1', 'a1 end', 'a2']);
  });

  it('rejects as the work does, and the next work of the key still runs', async () => {
    const serial = new KeyedSerial<string>();
    const failing = serial.run('k', () => Promise.reject(new Error('boom')));
    const next = serial.run('k', async () => 'ran');
    await assert.rejects(failing, /boom/);
    assert.equal(await next, 'ran');
  });

  it('idle resolves once the work of every key has settled, including work asked for while it waited', async () => {
    const serial = new KeyedSerial<string>();
    const log: string[] = [];
    const gate = Promise.withResolvers<void>();
    void serial.run('a', async () => {
      await gate.promise;
      log.push('a');
      void serial.run('b', async () => {
        log.push('b, asked while idle waited');
      });
    });
    const idle = serial.idle().then(() => log.push('idle'));
    gate.resolve();
    await idle;
    assert.deepEqual(log, ['a', 'b, asked while idle waited', 'idle']);
    await serial.idle();
  });
});
