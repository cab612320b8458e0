// Buttons and edits through the durable outbox, with in-memory connectors: buttons ride on the last part, a keyed
// message keeps its connector ref, a replacement is delivered as an edit of that ref where it can be and as a new
// message where it cannot, and a failed or interrupted edit is retried like a send.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import type { TestStore } from '../../test/support/test-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import type { OutboxConfig } from '../core/config-channels.ts';
import { outboxSchema } from '../core/config-channels.ts';
import { silentLogger } from '../core/logger.ts';
import type {
  ChannelTarget,
  ChatButton,
  Connector,
  InboundHandler,
  OutboundMessage,
  SentMessage,
} from './connector.ts';
import { DeliveryError } from './delivery-error.ts';
import type { DurableOutbox } from './outbox.ts';
import { createOutbox } from './outbox.ts';
import { EditRefusedError, fitOneMessage } from './outbox-edit.ts';

type Step = Error | 'hang';

/** An in-memory connector that numbers what it sends (its refs) and, unless built without, edits by ref. */
class EditingConnector implements Connector {
  readonly channel = 'chat';
  readonly maxMessageLength: number;
  idempotent = false;
  /** Whether `send` answers a ref. */
  givesRefs = true;
  readonly sends: { target: ChannelTarget; message: OutboundMessage; ref: string }[] = [];
  readonly edits: { target: ChannelTarget; ref: string; message: OutboundMessage }[] = [];
  /** Calls (sends and edits) attempted, in order. */
  readonly calls: string[] = [];
  /** Each entry decides the next call (send or edit): an error to throw, or 'hang' to never settle. */
  readonly script: Step[] = [];
  edit?: (target: ChannelTarget, ref: string, message: OutboundMessage) => Promise<void>;
  #next = 100;

  constructor(options: { editable?: boolean; maxMessageLength?: number } = {}) {
    this.maxMessageLength = options.maxMessageLength ?? 1000;
    if (options.editable ?? true) {
      this.edit = async (target, ref, message) => {
        this.calls.push(`edit ${ref}: ${message.text}`);
        await this.#play();
        this.edits.push({ target, ref, message });
      };
    }
  }

  async start(_onMessage: InboundHandler): Promise<void> {}
  async stop(): Promise<void> {}

  async send(target: ChannelTarget, message: OutboundMessage): Promise<SentMessage | void> {
    this.calls.push(`send: ${message.text}`);
    await this.#play();
    const ref = String(this.#next++);
    this.sends.push({ target, message, ref });
    return this.givesRefs ? { ref } : undefined;
  }

  async #play(): Promise<void> {
    const step = this.script.shift();
    if (step === 'hang') await new Promise<void>(() => {});
    else if (step) throw step;
  }
}

const chat = (id: string): ChannelTarget => ({ channel: 'chat', chat: id });
const ask: ChatButton[][] = [
  [
    { label: 'Allow', command: '/approve k3x9' },
    { label: 'Deny', command: '/deny k3x9' },
  ],
  [{ label: 'Always', command: '/approve k3x9 always' }],
];

describe('DurableOutbox buttons and edits', () => {
  let dir: { path: string; remove: () => void };
  let store: TestStore;
  let clock: ManualClock;
  let outbox: DurableOutbox;
  let connector: EditingConnector;

  function build(target: Connector, config: Partial<OutboxConfig> = {}): DurableOutbox {
    const made = createOutbox({
      db: store.db,
      clock,
      logger: silentLogger(),
      config: outboxSchema.parse(config),
      random: () => 0,
    });
    made.register(target);
    return made;
  }

  /** The stored ref of the message sent under `key`. */
  const refOf = async (key: string): Promise<unknown> =>
    (await store.db.selectFrom('outbox_messages').select('ref').where('dedupe_key', '=', key).executeTakeFirst())?.ref;

  beforeEach(async () => {
    dir = tempDir('sb-outbox-edit-');
    store = await openTestStore(join(dir.path, 'state.db'));
    clock = new ManualClock();
    connector = new EditingConnector();
    outbox = build(connector);
    await outbox.start();
  });

  afterEach(async () => {
    await outbox.stop();
    await store.close();
    dir.remove();
  });

  it('puts the buttons on the last part only, and keeps the ref of that part with a keyed message', async () => {
    await outbox.stop();
    connector = new EditingConnector({ maxMessageLength: 20 });
    outbox = build(connector);
    await outbox.start();
    await outbox.send(
      chat('1'),
      { text: 'one two three four five six seven eight', replyTo: '9', buttons: ask },
      { key: 'ask-1' },
    );
    await outbox.idle();
    assert.deepEqual(
      connector.sends.map((s) => [s.message.text, s.message.replyTo, s.message.buttons]),
      [
        ['one two three four', '9', undefined],
        ['five six seven eight', undefined, ask],
      ],
    );
    assert.equal(await refOf('ask-1'), '101', "the last part's ref");
  });

  it('delivers a replacement as an edit of the replaced message, with its new buttons or none', async () => {
    await outbox.send(chat('1'), { text: 'Allow Bash(ls)?', buttons: ask }, { key: 'ask-1' });
    await outbox.send(chat('1'), { text: 'Allowed once.', replaces: 'ask-1' }, { key: 'ask-1-decided' });
    await outbox.send(
      chat('1'),
      { text: 'Asked again', replaces: 'ask-1-decided', buttons: [[{ label: 'Deny', command: '/deny k3x9' }]] },
      { key: 'ask-1-again' },
    );
    await outbox.idle();
    assert.deepEqual(connector.calls, ['send: Allow Bash(ls)?', 'edit 100: Allowed once.', 'edit 100: Asked again']);
    assert.deepEqual(
      connector.edits.map((e) => [e.target, e.message]),
      [
        [chat('1'), { text: 'Allowed once.' }],
        [chat('1'), { text: 'Asked again', buttons: [[{ label: 'Deny', command: '/deny k3x9' }]] }],
      ],
    );
    assert.equal(await refOf('ask-1-decided'), '100', 'an edit keeps the ref it edited, so it can be replaced in turn');
    assert.equal((await outbox.metrics()).sent, 3);
  });

  it('fits an edit into one message', async () => {
    await outbox.stop();
    connector = new EditingConnector({ maxMessageLength: 20 });
    outbox = build(connector);
    await outbox.start();
    await outbox.send(chat('1'), { text: 'short' }, { key: 'k' });
    await outbox.send(chat('1'), { text: 'a much longer text than one part holds', replaces: 'k' });
    await outbox.idle();
    assert.deepEqual(
      connector.edits.map((e) => e.message.text),
      ['a much longer text …'],
    );
    assert.equal(connector.sends.length, 1);
    assert.equal(fitOneMessage('ab😀cd', 4), 'ab…', 'never cut inside a surrogate pair');
  });

  it('sends the replacement as a new message when the original cannot be edited', async () => {
    // Unknown key, a dead letter, another conversation, and an original sent without a ref.
    connector.script.push(new DeliveryError('chat not found', { kind: 'permanent' }));
    await outbox.send(chat('1'), { text: 'lost' }, { key: 'dead' });
    await outbox.send(chat('1'), { text: 'for dead', replaces: 'dead' });
    await outbox.send(chat('1'), { text: 'for nobody', replaces: 'never-sent' });
    // Chat 1's lane first: over PostgreSQL's pool chat 2's lane could reach the connector first and take the error.
    await outbox.idle();
    await outbox.send(chat('2'), { text: 'elsewhere' }, { key: 'other-chat' });
    await outbox.idle();
    await outbox.send(chat('1'), { text: 'for another chat', replaces: 'other-chat', buttons: ask });
    await outbox.idle();
    connector.givesRefs = false;
    await outbox.send(chat('1'), { text: 'no ref' }, { key: 'refless' });
    await outbox.send(chat('1'), { text: 'for refless', replaces: 'refless' });
    await outbox.idle();
    assert.deepEqual(connector.edits, []);
    assert.deepEqual(
      connector.sends.filter((s) => s.target.chat === '1').map((s) => [s.message.text, s.message.buttons]),
      [
        ['for dead', undefined],
        ['for nobody', undefined],
        ['for another chat', ask],
        ['no ref', undefined],
        ['for refless', undefined],
      ],
    );
  });

  it('sends the replacement as a new message on a channel that cannot edit', async () => {
    await outbox.stop();
    connector = new EditingConnector({ editable: false });
    outbox = build(connector);
    await outbox.start();
    await outbox.send(chat('1'), { text: 'Allow?', buttons: ask }, { key: 'ask' });
    await outbox.send(chat('1'), { text: 'Allowed.', replaces: 'ask' });
    await outbox.idle();
    assert.deepEqual(connector.calls, ['send: Allow?', 'send: Allowed.']);
  });

  it('falls back to a new message when the service refuses the edit for good, and keeps the new ref', async () => {
    await outbox.send(chat('1'), { text: 'Allow?' }, { key: 'ask' });
    await outbox.idle();
    connector.script.push(new EditRefusedError('Bad Request: message to edit not found'));
    await outbox.send(chat('1'), { text: 'Decided', replaces: 'ask', buttons: ask }, { key: 'decided' });
    await outbox.send(chat('1'), { text: 'Decided again', replaces: 'decided' });
    await outbox.idle();
    assert.deepEqual(connector.calls, [
      'send: Allow?',
      'edit 100: Decided',
      'send: Decided',
      'edit 101: Decided again',
    ]);
    assert.deepEqual(connector.sends[1]?.message, { text: 'Decided', buttons: ask });
    assert.equal(await refOf('decided'), '101');
    const metrics = await outbox.metrics();
    assert.deepEqual([metrics.sent, metrics.retried, metrics.failed], [3, 0, 0]);
  });

  it('retries a failed edit with backoff and dead-letters one the service refuses', async () => {
    await outbox.send(chat('1'), { text: 'Allow?' }, { key: 'ask' });
    await outbox.idle();
    connector.script.push(new Error('connection reset'));
    await outbox.send(chat('1'), { text: 'Allowed', replaces: 'ask' });
    await outbox.idle();
    assert.equal(connector.edits.length, 0);
    clock.advance(500);
    await outbox.idle();
    assert.deepEqual(
      connector.edits.map((e) => [e.ref, e.message.text]),
      [['100', 'Allowed']],
    );
    connector.script.push(new DeliveryError('Bad Request: chat not found', { kind: 'permanent', status: 400 }));
    await outbox.send(chat('1'), { text: 'Denied', replaces: 'ask' });
    await outbox.idle();
    const metrics = await outbox.metrics();
    assert.deepEqual([metrics.sent, metrics.retried, metrics.failed], [2, 1, 1]);
    assert.equal((await outbox.deadLetters())[0]?.text, 'Denied');
  });

  it('repeats an edit a crash interrupted (editing twice is harmless), counted as a failed attempt', async () => {
    await outbox.send(chat('1'), { text: 'Allow?', buttons: ask }, { key: 'ask' });
    await outbox.idle();
    connector.script.push('hang');
    await outbox.send(chat('1'), { text: 'Allowed', replaces: 'ask' }, { key: 'allowed' });
    await waitFor('the edit to begin', () => connector.calls.at(-1) === 'edit 100: Allowed');
    await outbox.stop();

    const again = new EditingConnector();
    outbox = build(again);
    await outbox.start();
    await outbox.idle();
    assert.deepEqual(again.calls, ['edit 100: Allowed']);
    assert.equal(await refOf('allowed'), '100');
    assert.equal((await outbox.metrics()).pending, 0);
  });

  it('refuses malformed buttons and an empty replaces, naming the field, and records nothing', async () => {
    const long = 'x'.repeat(65);
    await assert.rejects(outbox.send(chat('1'), { text: 'x', buttons: [[{ label: 'A', command: long }]] }), /buttons/);
    await assert.rejects(outbox.send(chat('1'), { text: 'x', buttons: [[{ label: ' ', command: '/a' }]] }), /buttons/);
    await assert.rejects(outbox.send(chat('1'), { text: 'x', buttons: [[]] }), /buttons/);
    await assert.rejects(outbox.send(chat('1'), { text: 'x', replaces: '' }), /replaces/);
    assert.equal((await outbox.metrics()).pending, 0);
    const multibyte = 'é'.repeat(32);
    await outbox.send(chat('1'), { text: 'ok', buttons: [[{ label: 'A', command: multibyte }]] });
    await outbox.idle();
    assert.equal(connector.sends[0]?.message.buttons?.[0]?.[0]?.command, multibyte, '64 bytes is allowed');
  });
});
