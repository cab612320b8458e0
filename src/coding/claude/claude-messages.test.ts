import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HarnessEvent } from '../harness.ts';
import { askUserQuestionText, ClaudeEventMapper, parseClaudeLine, parseClaudeMessage } from './claude-messages.ts';

/** Maps raw message objects through one mapper; a message that fails its schema yields the warning a run would emit. */
function mapAll(...messages: unknown[]): HarnessEvent[] {
  const mapper = new ClaudeEventMapper();
  return messages.flatMap((m): HarnessEvent[] => {
    const parsed = parseClaudeMessage(m);
    return parsed.ok ? mapper.map(parsed.message) : [{ type: 'warning', malformed: true, message: parsed.error }];
  });
}

const assistant = (content: unknown[], extra: Record<string, unknown> = {}): unknown => ({
  type: 'assistant',
  message: { id: 'msg_1', role: 'assistant', model: 'm', content },
  parent_tool_use_id: null,
  session_id: 's1',
  ...extra,
});

const toolResult = (id: string, content: unknown, isError = false): unknown => ({
  type: 'user',
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, is_error: isError }] },
  parent_tool_use_id: null,
  session_id: 's1',
});

const result = (extra: Record<string, unknown> = {}): unknown => ({
  type: 'result',
  subtype: 'success',
  is_error: false,
  result: 'done',
  total_cost_usd: 0.5,
  session_id: 's1',
  ...extra,
});

describe('ClaudeEventMapper', () => {
  it('system/init → started with the session id and model', () => {
    assert.deepEqual(mapAll({ type: 'system', subtype: 'init', session_id: 'abc', model: 'claude-x', tools: [] }), [
      { type: 'started', backendSessionId: 'abc', model: 'claude-x' },
    ]);
  });

  it('text blocks → one text event each; empty and thinking blocks are not text', () => {
    const events = mapAll(
      assistant([
        { type: 'text', text: 'hello' },
        { type: 'text', text: '  ' },
        { type: 'text', text: 'world' },
      ]),
      assistant([{ type: 'thinking', thinking: 'hmm' }]),
    );
    assert.deepEqual(events, [{ type: 'text', text: 'hello' }, { type: 'text', text: 'world' }, { type: 'activity' }]);
  });

  it('tool_use → tool; tool_result → toolResult with the same id and the output text', () => {
    const events = mapAll(
      assistant([{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }]),
      toolResult('t1', 'a\nb'),
      assistant([{ type: 'tool_use', id: 't2', name: 'Read', input: { path: 'x' } }]),
      toolResult('t2', [{ type: 'text', text: 'no such file' }], true),
    );
    assert.deepEqual(events, [
      { type: 'tool', id: 't1', name: 'Bash', input: { command: 'ls' } },
      { type: 'toolResult', id: 't1', isError: false, output: 'a\nb' },
      { type: 'tool', id: 't2', name: 'Read', input: { path: 'x' } },
      { type: 'toolResult', id: 't2', isError: true, output: 'no such file' },
    ]);
  });

  it('AskUserQuestion tool_use → tool and question', () => {
    const input = { questions: [{ question: 'Which file?', options: [] }, { question: 'Why?' }] };
    const events = mapAll(assistant([{ type: 'tool_use', id: 'q1', name: 'AskUserQuestion', input }]));
    assert.deepEqual(events, [
      { type: 'tool', id: 'q1', name: 'AskUserQuestion', input },
      { type: 'question', text: 'Which file?\nWhy?' },
    ]);
    assert.equal(askUserQuestionText({ question: 'Single?' }), 'Single?');
    assert.equal(askUserQuestionText(42), 'The agent asked a question.');
  });

  it('result → turnEnd with outcome, per-turn cost and usage; open tools are closed first', () => {
    const events = mapAll(
      assistant([{ type: 'tool_use', id: 't9', name: 'Bash', input: {} }]),
      result({ total_cost_usd: 0.5, usage: { input_tokens: 3, output_tokens: 4 } }),
      result({ total_cost_usd: 0.75, result: 'again' }),
    );
    assert.deepEqual(events, [
      { type: 'tool', id: 't9', name: 'Bash', input: {} },
      { type: 'toolResult', id: 't9', isError: true, output: 'no result: the turn ended first' },
      {
        type: 'turnEnd',
        outcome: { ok: true, result: 'done' },
        costUsd: 0.5,
        usage: { inputTokens: 3, outputTokens: 4 },
      },
      { type: 'turnEnd', outcome: { ok: true, result: 'again' }, costUsd: 0.25 },
    ]);
  });

  it('an interrupt noted by the harness turns the next failed result into reason interrupted, once', () => {
    const mapper = new ClaudeEventMapper();
    const failed = parseClaudeMessage(result({ subtype: 'error_during_execution', is_error: true, errors: ['x'] }));
    assert.ok(failed.ok);
    mapper.noteInterrupt();
    const [first] = mapper.map(failed.message);
    assert.equal(first?.type === 'turnEnd' && !first.outcome.ok && first.outcome.reason, 'interrupted');
    const [second] = mapper.map(failed.message);
    assert.equal(second?.type === 'turnEnd' && !second.outcome.ok && second.outcome.reason, 'execution_error');
  });

  it('unknown types, stream events, status and control messages → activity; api_retry → warning', () => {
    const events = mapAll(
      { type: 'keep_alive' },
      { type: 'rate_limit_event', rate_limit_info: {} },
      { type: 'stream_event', event: { type: 'content_block_delta' } },
      { type: 'system', subtype: 'status', status: 'requesting' },
      { type: 'control_request', request_id: 'r', request: { subtype: 'can_use_tool' } },
      { type: 'control_response', response: { subtype: 'success', request_id: 'r' } },
    );
    assert.deepEqual(events, Array(6).fill({ type: 'activity' }));
    const [retry] = mapAll({
      type: 'system',
      subtype: 'api_retry',
      attempt: 1,
      max_retries: 10,
      error_status: 529,
      error: 'overloaded',
    });
    assert.equal(retry?.type, 'warning');
    assert.match(retry?.type === 'warning' ? retry.message : '', /HTTP 529.*retry 1 of 10/);
  });

  it('subagent messages are activity, not the session output', () => {
    const events = mapAll(assistant([{ type: 'text', text: 'inner' }], { parent_tool_use_id: 'task1' }), {
      ...(toolResult('x', 'y') as object),
      parent_tool_use_id: 'task1',
    });
    assert.deepEqual(events, [{ type: 'activity' }, { type: 'activity' }]);
  });

  it("the CLI's synthetic API-error assistant message becomes a warning, not assistant text", () => {
    const events = mapAll(assistant([{ type: 'text', text: 'API Error: 400 bad' }], { error: 'unknown' }));
    assert.deepEqual(events, [{ type: 'warning', message: 'Claude Code (unknown): API Error: 400 bad' }]);
  });

  it('long tool output is capped', () => {
    const [event] = mapAll(toolResult('t', 'x'.repeat(20_000)));
    assert.ok(event?.type === 'toolResult' && event.output !== undefined && event.output.length < 16_100);
  });
});

describe('parseClaudeLine', () => {
  it('malformed lines are reported, never thrown', () => {
    for (const line of [
      'not json at all',
      '{"type":"assistant","message":42}',
      '42',
      '{"no":"type"}',
      '{"type":"result","subtype":"success"}',
      '{"type":"system","subtype":"init"}',
    ]) {
      const parsed = parseClaudeLine(line);
      assert.equal(parsed.ok, false, line);
    }
    const bad = parseClaudeLine('{"type":"assistant","message":42}');
    assert.match(bad.ok ? '' : bad.error, /assistant message failed its schema \(message:/);
  });

  it('a known block type with missing fields fails; unknown block types pass', () => {
    assert.equal(parseClaudeLine(JSON.stringify(assistant([{ type: 'text' }]))).ok, false);
    assert.equal(parseClaudeLine(JSON.stringify(assistant([{ type: 'tool_use', name: 'x' }]))).ok, false);
    assert.equal(parseClaudeLine(JSON.stringify(assistant([{ type: 'server_tool_use', whatever: 1 }]))).ok, true);
  });

  it('unknown message types parse as other', () => {
    const parsed = parseClaudeLine('{"type":"brand_new_thing","x":1}');
    assert.ok(parsed.ok);
    assert.equal(parsed.message.kind, 'other');
  });
});
