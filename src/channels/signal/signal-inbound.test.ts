import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeliveryError } from '../delivery-error.ts';
import { parseReceive, quoteOf, recipientOf, refusalText } from './signal-inbound.ts';
import { rpcError } from './signal-rpc.ts';

const envelope = (extra: Record<string, unknown>): Record<string, unknown> => ({
  source: '+15551110000',
  sourceNumber: '+15551110000',
  sourceUuid: 'a3f1',
  sourceName: 'Ann',
  sourceDevice: 1,
  timestamp: 1700000000123,
  ...extra,
});

describe('parseReceive', () => {
  it('reads the SSE form and the JSON-RPC notification form alike', () => {
    const data = { account: '+15550000001', envelope: envelope({ dataMessage: { message: 'hi', timestamp: 1 } }) };
    const expected = {
      id: '+15551110000:1700000000123',
      sender: '+15551110000',
      senderName: 'Ann',
      chat: '+15551110000',
      text: 'hi',
      hasAttachments: false,
      timestamp: 1700000000123,
    };
    assert.deepEqual(parseReceive(JSON.stringify(data)), expected);
    assert.deepEqual(parseReceive(JSON.stringify({ jsonrpc: '2.0', method: 'receive', params: data })), expected);
  });

  it('takes the service id when the number is not shared, and a group as group.<id>', () => {
    const parsed = parseReceive(
      JSON.stringify({
        envelope: envelope({
          source: 'a3f1',
          sourceNumber: null,
          dataMessage: { message: 'yo', groupInfo: { groupId: 'AB/+=', type: 'DELIVER' } },
        }),
      }),
    );
    assert.equal(parsed?.sender, 'a3f1');
    assert.equal(parsed?.chat, 'group.AB/+=');
    assert.deepEqual(recipientOf({ channel: 'signal', chat: 'group.AB/+=' }), { kind: 'group', groupId: 'AB/+=' });
    assert.match(refusalText('a3f1', undefined), /Your Signal id is a3f1/);
    assert.match(
      refusalText('+1555', 'work'),
      /number is \+1555[\s\S]*channels\.signal\.accounts\.work\.allowedNumbers/,
    );
  });

  it('ignores receipts, typing, sync messages, reactions, group updates and garbage', () => {
    for (const extra of [
      { receiptMessage: { isDelivery: true } },
      { typingMessage: { action: 'STARTED' } },
      { syncMessage: { sentMessage: { message: 'from my phone' } } },
      { dataMessage: { message: null, reaction: { emoji: '👍' } } },
      { dataMessage: { message: 'x', groupInfo: { groupId: 'G', type: 'UPDATE' } } },
    ])
      assert.equal(parseReceive(JSON.stringify({ envelope: envelope(extra) })), null, JSON.stringify(extra));
    assert.equal(parseReceive('not json'), null);
    assert.equal(parseReceive(JSON.stringify({ exception: { message: 'boom' } })), null);
  });
});

describe('quoteOf and rpcError', () => {
  it('quotes an inbound id, with or without an account prefix', () => {
    assert.deepEqual(quoteOf('+1555:42'), { quoteAuthor: '+1555', quoteTimestamp: 42 });
    assert.deepEqual(quoteOf('work:+1555:42'), { quoteAuthor: '+1555', quoteTimestamp: 42 });
    assert.equal(quoteOf('web-123'), undefined);
    assert.equal(quoteOf(undefined), undefined);
  });

  it('classifies signal-cli errors', () => {
    const kind = (code: number, message: string): string => {
      const error = rpcError('send', { code, message });
      assert.ok(error instanceof DeliveryError);
      return error.kind;
    };
    assert.equal(kind(-32602, 'Invalid recipient'), 'permanent');
    assert.equal(kind(-1, 'Unregistered user'), 'permanent');
    assert.equal(kind(-5, 'Rate limit exceeded'), 'rate_limited');
    assert.equal(kind(-3, 'IO error'), 'transient');
    assert.equal(kind(-32603, 'An internal server error has occurred.'), 'transient');
  });
});
