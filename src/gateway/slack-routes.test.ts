// POST /slack/events on a real Fastify server with a real http-mode Slack connector (Bolt, its Web API client pointed
// at the fake Slack): the signature is checked on the raw bytes before anything is parsed (forged, stale, replayed and
// unsigned requests refused with 401 and nothing handed over), events, the slash command and button presses are
// accepted and acknowledged with the response, url_verification is answered, the body is bounded.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import { captureLogger } from '../../test/support/capture-logger.ts';
import type { FakeSlack } from '../../test/support/fake-slack.ts';
import { startFakeSlack } from '../../test/support/fake-slack.ts';
import {
  blockActionsPayload,
  commandPayload,
  eventCallback,
  messageEvent,
  postSigned,
} from '../../test/support/fake-slack-payloads.ts';
import { slackHttpEndpoints } from '../channels/chat-connectors.ts';
import type { InboundMessage } from '../channels/connector.ts';
import type { SlackConnector } from '../channels/slack/slack-connectors.ts';
import { createSlackConnectors } from '../channels/slack/slack-connectors.ts';
import { systemClock } from '../core/clock.ts';
import { slackChannelSchema } from '../core/config-slack.ts';
import { registerSlackRoutes, SLACK_EVENTS_PATH, SLACK_MAX_BODY_BYTES } from './slack-routes.ts';

const SECRET = 'signing-secret-for-tests';
const OWNER = 'UOWNER';

describe('POST /slack/events (Events API over HTTP)', () => {
  let fake: FakeSlack;
  let slack: SlackConnector;
  let app: FastifyInstance;
  let url: string;
  const got: InboundMessage[] = [];
  let fail = false;

  before(async () => {
    fake = await startFakeSlack();
    const section = slackChannelSchema.parse({
      enabled: true,
      mode: 'http',
      botToken: fake.botToken,
      signingSecret: SECRET,
      apiUrl: fake.apiUrl,
      allowedUserIds: [OWNER],
    });
    const { logger } = captureLogger();
    const [connector] = createSlackConnectors(section, { clock: systemClock(), logger, env: {} });
    assert.ok(connector);
    slack = connector;
    await slack.start(async (m) => {
      if (fail) throw new Error('store down');
      got.push(m);
    });
    app = Fastify();
    await registerSlackRoutes(app, { endpoints: slackHttpEndpoints([slack]), logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${SLACK_EVENTS_PATH}`;
  });

  after(async () => {
    await app?.close();
    await slack?.stop();
    await fake?.close();
  });

  beforeEach(() => {
    got.length = 0;
    fail = false;
  });

  const dm = (text: string): { kind: 'event'; body: Record<string, unknown> } => {
    const ts = fake.nextTs();
    return { kind: 'event', body: eventCallback(messageEvent({ user: OWNER, text }, ts), `Ev${ts}`) };
  };

  it('accepts a well-signed event, hands it over, and answers 200 after', async () => {
    const reply = await postSigned(url, SECRET, dm('hello'));
    assert.equal(reply.status, 200);
    assert.equal(got.length, 1);
    assert.equal(got[0]?.text, 'hello');
    assert.deepEqual(got[0]?.target, { channel: 'slack', chat: `D${OWNER}` });
  });

  it('refuses forged, stale, replayed and unsigned requests with 401; nothing is handed over', async () => {
    const forged = await postSigned(url, 'not-the-secret', dm('forged'));
    assert.equal(forged.status, 401);
    assert.match(forged.body, /forged/);
    const stale = await postSigned(url, SECRET, dm('stale'), { timestamp: Math.floor(Date.now() / 1000) - 301 });
    assert.equal(stale.status, 401);
    assert.match(stale.body, /stale/);
    const unsigned = await postSigned(url, SECRET, dm('unsigned'), { signature: '' });
    assert.equal(unsigned.status, 401);

    const post = dm('once');
    const first = await postSigned(url, SECRET, post);
    assert.equal(first.status, 200);
    const replay = await postSigned(url, SECRET, post, { timestamp: first.timestamp, signature: first.signature });
    assert.equal(replay.status, 401);
    assert.match(replay.body, /replayed/);
    assert.deepEqual(
      got.map((m) => m.text),
      ['once'],
    );
  });

  it('answers 500 when the message could not be accepted; the same signed request is welcome when Slack retries it', async () => {
    fail = true;
    const post = dm('retry me');
    const first = await postSigned(url, SECRET, post);
    assert.equal(first.status, 500);
    fail = false;
    const again = await postSigned(url, SECRET, post, { timestamp: first.timestamp, signature: first.signature });
    assert.equal(again.status, 200);
    assert.deepEqual(
      got.map((m) => m.text),
      ['retry me'],
    );
  });

  it('takes the slash command (form) and button presses (payload=…), and answers url_verification', async () => {
    const command = await postSigned(url, SECRET, {
      kind: 'command',
      body: commandPayload('/switchboard', OWNER, 'claude_sessions', `D${OWNER}`, 'trig-1'),
    });
    assert.equal(command.status, 200);
    const press = await postSigned(url, SECRET, {
      kind: 'interactive',
      body: blockActionsPayload({
        user: OWNER,
        channel: 'CTEAM',
        messageTs: '1700000001.000001',
        actionId: 'switchboard:0-0',
        value: '/approve k3x9 session',
        actionTs: '1700000002.5',
        triggerId: 'trig-2',
      }),
    });
    assert.equal(press.status, 200);
    assert.deepEqual(
      got.map((m) => [m.text, m.pressed ?? false, m.target.chat]),
      [
        ['/claude_sessions', false, `D${OWNER}`],
        ['/approve k3x9 session', true, 'CTEAM'],
      ],
    );
    const challenge = await postSigned(url, SECRET, {
      kind: 'event',
      body: { type: 'url_verification', challenge: 'c-123', token: 'x' },
    });
    assert.equal(challenge.status, 200);
    assert.deepEqual(JSON.parse(challenge.body), { challenge: 'c-123' });
  });

  it('refuses a body over the limit with 413, before looking at it', async () => {
    const big = dm('x'.repeat(SLACK_MAX_BODY_BYTES));
    const reply = await postSigned(url, SECRET, big);
    assert.equal(reply.status, 413);
    assert.equal(got.length, 0);
  });
});
