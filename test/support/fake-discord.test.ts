// The fake Discord's own checks, as a raw client sees them: REST auth and errors, the Gateway handshake and its
// refusals (a wrong token, a compressed transport).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { FakeDiscord } from './fake-discord.ts';
import { startFakeDiscord } from './fake-discord.ts';

/** Opens the Gateway with `query`, sends `identify` after HELLO, and resolves with the frames and the close code. */
async function gateway(
  fake: FakeDiscord,
  query: string,
  token: string,
): Promise<{ frames: { op: number; t: string | null }[]; code: number }> {
  const socket = new WebSocket(`${fake.ownGatewayUrl()}?${query}`);
  const frames: { op: number; t: string | null }[] = [];
  return new Promise((resolve) => {
    socket.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as { op: number; t: string | null };
      frames.push(frame);
      if (frame.op === 10) socket.send(JSON.stringify({ op: 2, d: { token, intents: 1, properties: {} } }));
      if (frame.t === 'GUILD_CREATE') socket.close(1000);
    });
    socket.on('close', (code) => resolve({ frames, code }));
  });
}

describe('fake Discord', () => {
  let fake: FakeDiscord;
  before(async () => {
    fake = await startFakeDiscord();
  });
  after(async () => {
    await fake?.close();
  });

  it('answers REST with Discord’s errors: 401 without the bot token, 404 Unknown Channel', async () => {
    const me = await fetch(`${fake.url}/v10/users/@me`);
    assert.equal(me.status, 401);
    const unknown = await fetch(`${fake.url}/v10/channels/1/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${fake.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'hi' }),
    });
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { code: 10003, message: 'Unknown Channel' });
    const gatewayBot = await fetch(`${fake.url}/v10/gateway/bot`, { headers: { authorization: `Bot ${fake.token}` } });
    assert.equal(((await gatewayBot.json()) as { url: string }).url, fake.ownGatewayUrl());
  });

  it('says HELLO, answers IDENTIFY with READY and GUILD_CREATE, and refuses a wrong token or compression', async () => {
    const ok = await gateway(fake, 'v=10&encoding=json', fake.token);
    assert.deepEqual(
      ok.frames.map((f) => (f.op === 0 ? f.t : f.op)),
      [10, 'READY', 'GUILD_CREATE'],
    );
    assert.equal((await gateway(fake, 'v=10&encoding=json', 'wrong')).code, 4004);
    assert.equal((await gateway(fake, 'v=10&encoding=json&compress=zlib-stream', fake.token)).code, 4012);
  });
});
