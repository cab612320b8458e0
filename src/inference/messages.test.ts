import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asSchema } from 'ai';
import { fromToolCalls, toModelMessages, toToolSet } from './messages.ts';

describe('toModelMessages', () => {
  it('maps user text, assistant text and assistant tool calls', () => {
    const out = toModelMessages([
      { role: 'user', content: 'list sessions' },
      { role: 'assistant', content: 'Looking.', toolCalls: [{ id: 'c1', name: 'list', input: { all: true } }] },
      { role: 'tool', toolCallId: 'c1', toolName: 'list', content: '2 sessions', isError: false },
      { role: 'assistant', content: 'There are 2.' },
    ]);
    assert.deepEqual(out, [
      { role: 'user', content: 'list sessions' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'list', input: { all: true } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'list', output: { type: 'text', value: '2 sessions' } },
        ],
      },
      { role: 'assistant', content: 'There are 2.' },
    ]);
  });

  it('puts consecutive tool results in one tool message and flags errors as error-text', () => {
    const out = toModelMessages([
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'x', input: {} },
          { id: 'b', name: 'y', input: {} },
        ],
      },
      { role: 'tool', toolCallId: 'a', toolName: 'x', content: 'ok', isError: false },
      { role: 'tool', toolCallId: 'b', toolName: 'y', content: 'no such session', isError: true },
    ]);
    assert.equal(out.length, 2);
    assert.deepEqual(out[0], {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'a', toolName: 'x', input: {} },
        { type: 'tool-call', toolCallId: 'b', toolName: 'y', input: {} },
      ],
    });
    assert.deepEqual(out[1], {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'a', toolName: 'x', output: { type: 'text', value: 'ok' } },
        {
          type: 'tool-result',
          toolCallId: 'b',
          toolName: 'y',
          output: { type: 'error-text', value: 'no such session' },
        },
      ],
    });
  });

  it('drops an assistant message with neither text nor tool calls, and gives a missing input {}', () => {
    const out = toModelMessages([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'x', input: undefined }] },
    ]);
    assert.deepEqual(out, [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'x', input: {} }] },
    ]);
  });
});

describe('toToolSet', () => {
  it('is undefined with no tools', () => {
    assert.equal(toToolSet([]), undefined);
  });

  it('makes execute-less definitions carrying the JSON schema', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const tools = toToolSet([{ name: 'kill', description: 'Kill a session', inputSchema: schema }]);
    assert.ok(tools);
    const kill = tools.kill;
    assert.ok(kill);
    assert.equal(kill.description, 'Kill a session');
    assert.equal('execute' in kill && kill.execute !== undefined, false);
    assert.deepEqual(await asSchema(kill.inputSchema).jsonSchema, schema);
  });
});

describe('fromToolCalls', () => {
  it('keeps id, name and input', () => {
    assert.deepEqual(fromToolCalls([{ toolCallId: 't1', toolName: 'get', input: { id: 3 } }]), [
      { id: 't1', name: 'get', input: { id: 3 } },
    ]);
  });
});
