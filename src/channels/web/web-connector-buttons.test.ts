// The web connector's buttons and edits: a daemon message keeps its buttons, `send` answers its transcript position as
// the ref (the same on a repeated delivery key), `edit` replaces text and buttons and tells open pages, and a page's
// button press reaches the inbound handler marked `pressed`.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { openTestStore, type TestStore } from '../../../test/support/test-store.ts';
import { ManualClock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config-load.ts';
import { silentLogger } from '../../core/logger.ts';
import type { WebMessage } from '../../store/web-transcript.ts';
import type { ChatButton, InboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { EditRefusedError } from '../outbox-edit.ts';
import { WebConnector } from './web-connector.ts';

const CHAT = 'chat-bbbb2222';
const TARGET = { channel: 'web', chat: CHAT };
const BUTTONS: ChatButton[][] = [
  [
    { label: 'Allow', command: '/approve k3x9q' },
    { label: 'Allow for session', command: '/approve k3x9q session' },
    { label: 'Always', command: '/approve k3x9q always' },
  ],
  [{ label: 'Deny', command: '/deny k3x9q' }],
];

describe('WebConnector buttons and edits', () => {
  let dir: { path: string; remove: () => void };
  let db: TestStore;
  let clock: ManualClock;
  let received: InboundMessage[];
  let connector: WebConnector;
  let live: WebMessage[];
  let closeFeed: () => void;

  beforeEach(async () => {
    dir = tempDir();
    db = await openTestStore(join(dir.path, 'state.db'));
    clock = new ManualClock();
    received = [];
    const { config } = loadConfig({ home: dir.path, env: {}, overrides: {} });
    connector = new WebConnector({ db: db.db, config: config.channels.web, clock, logger: silentLogger() });
    await connector.start(async (m) => {
      received.push(m);
    });
    live = [];
    const feed = await connector.follow(CHAT, null, { onMessage: (m) => live.push(m), onClose: () => {} });
    closeFeed = () => feed.close();
  });
  afterEach(async () => {
    closeFeed();
    await connector.stop();
    await db.close();
    dir.remove();
  });

  it('keeps a message’s buttons and answers its position as the ref, the same ref on a repeated delivery key', async () => {
    const sent = await connector.send(TARGET, { text: 'Bash: npm test', buttons: BUTTONS }, { key: 'outbox-7-0' });
    assert.deepEqual(
      live.map((m) => [m.text, m.buttons]),
      [['Bash: npm test', BUTTONS]],
    );
    assert.deepEqual(sent, { ref: String(live[0]?.pos) });
    const again = await connector.send(TARGET, { text: 'Bash: npm test', buttons: BUTTONS }, { key: 'outbox-7-0' });
    assert.deepEqual(again, sent);
    assert.equal(live.length, 1, 'a repeated key appends and pushes nothing');
    const other = await connector.send(TARGET, { text: 'plain' });
    assert.notDeepEqual(other, sent);
    assert.equal(live[1]?.buttons, null);
  });

  it('edits a message in place: text and buttons replaced, buttons removed when absent, pages told', async () => {
    const sent = await connector.send(TARGET, { text: 'Bash: npm test', buttons: BUTTONS }, { key: 'outbox-8-0' });
    assert.ok(sent);
    clock.advance(5);
    await connector.edit(TARGET, sent.ref, { text: 'Bash: npm test — allowed for session by web' });
    assert.equal(live.length, 2);
    const [first, edited] = live;
    assert.deepEqual(
      [edited?.pos, edited?.text, edited?.buttons],
      [first?.pos, 'Bash: npm test — allowed for session by web', null],
    );
    assert.ok((edited?.version ?? 0) > (first?.version ?? 0));
    await connector.edit(TARGET, sent.ref, { text: 'Bash: npm test — allowed for session by web' });
    assert.equal(live.length, 2, 'repeating an edit changes nothing and pushes nothing');
    await connector.edit(TARGET, sent.ref, {
      text: 'ask again',
      buttons: [[{ label: 'Deny', command: '/deny k3x9q' }]],
    });
    assert.deepEqual(live[2]?.buttons, [[{ label: 'Deny', command: '/deny k3x9q' }]]);
    const history = await connector.follow(CHAT, null, { onMessage: () => {}, onClose: () => {} });
    assert.deepEqual(
      history.history.map((m) => m.text),
      ['ask again'],
      'the transcript holds the message once',
    );
    history.close();
  });

  it('refuses an edit of a message that is not its chat’s daemon message (the outbox then sends it anew)', async () => {
    const permanent = (pattern: RegExp) => (e: unknown) =>
      e instanceof DeliveryError && e.kind === 'permanent' && pattern.test(e.message);
    const refused = (pattern: RegExp) => (e: unknown) => e instanceof EditRefusedError && pattern.test(e.message);
    const sent = await connector.send(TARGET, { text: 'asked' });
    assert.ok(sent);
    await assert.rejects(connector.edit(TARGET, 'abc', { text: 'x' }), refused(/not a web message position/));
    await assert.rejects(
      connector.edit(TARGET, String(Number(sent.ref) + 50), { text: 'x' }),
      refused(/has no daemon message/),
    );
    await assert.rejects(
      connector.edit({ channel: 'web', chat: 'chat-other-1' }, sent.ref, { text: 'x' }),
      refused(/has no daemon message/),
    );
    await assert.rejects(
      connector.edit({ channel: 'telegram', chat: '42' }, sent.ref, { text: 'x' }),
      permanent(/target.channel/),
    );
    const page = await connector.accept(CHAT, { id: 'msg-00000010', text: 'mine' });
    await assert.rejects(
      connector.edit(TARGET, String(page.message.pos), { text: 'x' }),
      refused(/has no daemon message/),
    );
  });

  it('passes a pressed button’s command on marked pressed, and a typed message unmarked', async () => {
    await connector.accept(CHAT, { id: 'msg-00000011', text: '/approve k3x9q session', pressed: true });
    await connector.accept(CHAT, { id: 'msg-00000012', text: '/approve k3x9q' });
    assert.deepEqual(
      received.map((m) => [m.text, m.pressed]),
      [
        ['/approve k3x9q session', true],
        ['/approve k3x9q', undefined],
      ],
    );
  });
});
