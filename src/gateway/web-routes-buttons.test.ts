// The web chat API with buttons: a daemon message's buttons reach the page in the stream, an edit reaches it as the
// same position under a new version, and a page's button press is posted with `pressed` and handed on marked.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { WebGatewayFixture } from '../../test/support/web-gateway.ts';
import { webGateway } from '../../test/support/web-gateway.ts';
import type { SseClient } from '../../test/support/web-http.ts';
import { httpCall, openSse } from '../../test/support/web-http.ts';
import type { InboundMessage } from '../channels/connector.ts';

const CHAT = 'chat-test-0002';
const TARGET = { channel: 'web', chat: CHAT };

async function login(g: WebGatewayFixture): Promise<Record<string, string>> {
  const page = await httpCall(g.port, 'GET', '/', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' });
  const cookie = (page.headers['set-cookie']?.[0] ?? '').split(';')[0] as string;
  return {
    cookie,
    origin: `http://127.0.0.1:${g.port}`,
    'sec-fetch-site': 'same-origin',
    'content-type': 'application/json',
  };
}

describe('web routes: buttons', () => {
  let g: WebGatewayFixture;
  const streams: SseClient[] = [];
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await g.close();
  });

  it('streams a message with its buttons, then its edit under the same position', async () => {
    g = await webGateway({ handler: () => async () => {} });
    const headers = await login(g);
    const sse = await openSse(g.port, `/web/api/chats/${CHAT}/events`, { cookie: headers.cookie ?? '' });
    streams.push(sse);
    const buttons = [[{ label: 'Allow', command: '/approve k3x9q' }], [{ label: 'Deny', command: '/deny k3x9q' }]];
    const sent = await g.connector.send(TARGET, { text: 'Bash: npm test', buttons });
    assert.ok(sent);
    const [asked] = await sse.waitFor(1);
    const view = JSON.parse(asked?.data ?? '{}');
    assert.deepEqual([view.pos, view.text, view.buttons], [Number(sent.ref), 'Bash: npm test', buttons]);
    await g.connector.edit(TARGET, sent.ref, { text: 'Bash: npm test — allowed by web' });
    const events = await sse.waitFor(2);
    const edited = JSON.parse(events[1]?.data ?? '{}');
    assert.deepEqual(
      [edited.pos, edited.text, edited.buttons, events[1]?.id],
      [view.pos, 'Bash: npm test — allowed by web', [], String(edited.version)],
    );
    assert.ok(edited.version > view.version);

    const reconnect = await openSse(g.port, `/web/api/chats/${CHAT}/events`, {
      cookie: headers.cookie ?? '',
      'last-event-id': String(view.version),
    });
    streams.push(reconnect);
    const [missed] = await reconnect.waitFor(1);
    assert.equal(JSON.parse(missed?.data ?? '{}').text, 'Bash: npm test — allowed by web', 'a reconnect gets the edit');
  });

  it('hands a pressed button on marked pressed, and refuses a pressed that is not a boolean', async () => {
    const got: InboundMessage[] = [];
    g = await webGateway({ handler: () => async (m) => void got.push(m) });
    const headers = await login(g);
    const post = (body: Record<string, unknown>) =>
      httpCall(g.port, 'POST', `/web/api/chats/${CHAT}/messages`, headers, JSON.stringify(body));
    assert.equal((await post({ id: 'msg-00000021', text: '/approve k3x9q session', pressed: true })).status, 202);
    assert.equal((await post({ id: 'msg-00000022', text: 'typed' })).status, 202);
    const bad = await post({ id: 'msg-00000023', text: '/deny k3x9q', pressed: 'yes' });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /pressed/);
    assert.deepEqual(
      got.map((m) => [m.text, m.pressed]),
      [
        ['/approve k3x9q session', true],
        ['typed', undefined],
      ],
    );
  });
});
