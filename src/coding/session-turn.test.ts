// SessionTurn: what each piece of a turn's content writes, buffers and signals, and what the turn's end knows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureLogger } from '../../test/support/capture-logger.ts';
import { OutputBuffer } from './output-buffer.ts';
import type { SessionLogEntry } from './session-log.ts';
import type { TurnSignal } from './session-turn.ts';
import { SessionTurn } from './session-turn.ts';

function rig() {
  const capture = captureLogger();
  const log: SessionLogEntry[] = [];
  const signals: TurnSignal[] = [];
  const output = new OutputBuffer();
  const turn = new SessionTurn({
    sessionId: 's1',
    output,
    logger: capture.logger,
    write: (entry) => {
      log.push(entry);
      return { seq: log.length + 10 };
    },
    emit: (signal) => signals.push(signal),
  });
  return { turn, log, signals, output, capture };
}

describe('SessionTurn', () => {
  it('text is written, buffered at its seq and signalled with it', () => {
    const r = rig();
    r.turn.text('hello');
    assert.deepEqual(r.log, [{ type: 'output', text: 'hello' }]);
    assert.deepEqual(r.output.last(), [{ seq: 11, text: 'hello' }]);
    assert.deepEqual(r.signals, [{ type: 'output', text: 'hello', seq: 11 }]);
  });

  it('a tool call is open until its result; the turn end forgets the open ones', () => {
    const r = rig();
    r.turn.tool({ type: 'tool', id: 't1', name: 'Bash', input: { command: 'ls' } });
    r.turn.tool({ type: 'tool', id: 't2', name: 'Read', input: {} });
    r.turn.toolResult({ type: 'toolResult', id: 't1', isError: false, output: 'a' });
    r.turn.toolResult({ type: 'toolResult', id: 'tx', isError: true });
    assert.equal(r.turn.openToolCalls, 1);
    assert.deepEqual(r.log.slice(2), [
      { type: 'toolResult', id: 't1', isError: false, output: 'a' },
      { type: 'toolResult', id: 'tx', isError: true },
    ]);
    assert.deepEqual(r.signals, [
      { type: 'tool', name: 'Bash', input: { command: 'ls' } },
      { type: 'tool', name: 'Read', input: {} },
    ]);
    r.turn.end();
    assert.equal(r.turn.openToolCalls, 0);
  });

  it('a turn asks when it asked explicitly (unless answered) or its last text ends with "?"', () => {
    const r = rig();
    assert.equal(r.turn.end(), false);
    r.turn.question('Which one?');
    assert.deepEqual(r.signals.at(-1), { type: 'question', text: 'Which one?' });
    assert.equal(r.turn.end(), true);
    assert.equal(r.turn.end(), false, 'a new turn asks afresh');
    r.turn.question('Allow it?');
    r.turn.answered();
    assert.equal(r.turn.end(), false);
    r.turn.text('Shall I push it?');
    assert.equal(r.turn.end(), true);
  });

  it('the turn record has the cost (never negative) and the new total', () => {
    const r = rig();
    const total = r.turn.writeEnd({ type: 'turnEnd', outcome: { ok: true }, costUsd: 0.1 }, 0.2);
    assert.equal(total, 0.3);
    assert.deepEqual(r.log.at(-1), { type: 'turn', outcome: { ok: true }, costUsd: 0.1, totalCostUsd: 0.3 });
    const usage = { inputTokens: 1, outputTokens: 2 };
    assert.equal(r.turn.writeEnd({ type: 'turnEnd', outcome: { ok: true }, costUsd: -1, usage }, 0.3), 0.3);
    assert.deepEqual(r.log.at(-1), { type: 'turn', outcome: { ok: true }, costUsd: 0, totalCostUsd: 0.3, usage });
  });

  it('a warning is written and logged; malformed lines are counted', () => {
    const r = rig();
    r.turn.warning({ type: 'warning', message: 'Reconnecting…' });
    r.turn.warning({ type: 'warning', message: 'bad line', malformed: true });
    assert.equal(r.turn.malformedLines, 1);
    assert.deepEqual(r.log, [
      { type: 'warning', message: 'Reconnecting…' },
      { type: 'warning', message: 'bad line', malformed: true },
    ]);
    assert.equal(r.capture.find('warn', /bad line/)[0]?.malformed, true);
    assert.deepEqual(r.signals, []);
  });
});
