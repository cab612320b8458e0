// Any node of a cluster answers any request (three daemon processes on one PostgreSQL, a mock model behind the engine):
// the engine's listings (`engine.sessions`) answer on a node that does not hold `primary` with the holder's sessions,
// and a person on the web page of such a node sees the orchestrator's reply live on that node's chat stream (SSE), as
// does a page open on the holder. Webhooks sent to a non-holder: see cluster-any-node-webhooks.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseSse } from '../../src/cli/sse.ts';
import { heldBy } from '../support/cluster-load.ts';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { chatInference } from '../support/e2e-daemon.ts';
import type { MockOpenAIChat } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText, startMockOpenAIChat } from '../support/mock-openai-chat.ts';
import { postgresSkip } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;
const CHAT = 'chat-anynode01';

/** A transcript change as the chat stream sends it. */
interface ChatEvent {
  pos: number;
  version: number;
  role: 'user' | 'agent';
  text: string;
  status: string;
}

/** A page's chat stream on `node`: every event it received so far, and the handle that ends it. */
interface ChatStream {
  events: ChatEvent[];
  close(): Promise<void>;
}

async function openChat(node: DaemonProcess, chat: string): Promise<ChatStream> {
  const abort = new AbortController();
  const response = await fetch(`${node.url}/web/api/chats/${chat}/events`, {
    headers: { authorization: `Bearer ${node.token}` },
    signal: abort.signal,
  });
  assert.equal(response.status, 200);
  assert.ok(response.body);
  const events: ChatEvent[] = [];
  const reading = (async () => {
    try {
      for await (const event of parseSse(response.body as ReadableStream<Uint8Array>)) {
        if (event.event === 'message') events.push(JSON.parse(event.data) as ChatEvent);
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  return {
    events,
    async close() {
      abort.abort();
      await reading;
    },
  };
}

async function sendFromPage(node: DaemonProcess, chat: string, id: string, text: string): Promise<void> {
  const response = await fetch(`${node.url}/web/api/chats/${chat}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, text }),
  });
  assert.equal(response.status, 202, await response.text());
}

describe('any node of a cluster answers any request', { skip: postgresSkip() }, () => {
  let rig: ClusterRig | undefined;
  let model: MockOpenAIChat | undefined;
  const cluster = (): ClusterRig => {
    if (!rig) throw new Error('the rig did not start');
    return rig;
  };

  before(async () => {
    model = await startMockOpenAIChat({ handler: (body) => chatText(`answer to: ${lastUserText(body)}`) });
    rig = await startClusterRig('sb-cluster-any-node-', [{ name: 'alpha' }, { name: 'beta' }, { name: 'gamma' }], {
      config: { inference: chatInference(model.url), heartbeat: { intervalMinutes: 0 } },
    });
  });

  after(async () => {
    await rig?.stop();
    await model?.close();
  });

  it("shows a web chat reply live on a non-holder's page and on the holder's, and lists the engine's sessions on every node", async () => {
    const holderName = await heldBy(cluster(), 'primary');
    const others = cluster()
      .up()
      .filter((name) => name !== holderName);
    const [pageNode, thirdNode] = others.map((name) => cluster().node(name));
    assert.ok(pageNode && thirdNode, 'two nodes that do not serve the engine');
    const holder = cluster().node(holderName);
    const onPageNode = await openChat(pageNode, CHAT);
    const onHolder = await openChat(holder, CHAT);
    try {
      await sendFromPage(pageNode, CHAT, 'msg-anynode-0001', 'hello from a far page');
      const replied = (events: ChatEvent[]): true | undefined =>
        events.some((e) => e.role === 'agent' && e.text === 'answer to: hello from a far page') ? true : undefined;
      await waitFor("the reply on the non-holder's page", () => replied(onPageNode.events), LONG);
      await waitFor("the reply on the holder's page", () => replied(onHolder.events), LONG);
      for (const stream of [onPageNode, onHolder]) {
        const versions = stream.events.map((e) => e.version);
        assert.deepEqual(
          versions,
          [...new Set(versions)].sort((a, b) => a - b),
          'each change once, in order',
        );
        assert.equal(stream.events.filter((e) => e.role === 'agent').length, 1, 'one reply');
      }
      assert.ok(
        onHolder.events.some((e) => e.role === 'user' && e.text === 'hello from a far page' && e.status === 'accepted'),
        "the holder's page shows the message sent on the other node",
      );
    } finally {
      await onPageNode.close();
      await onHolder.close();
    }

    // The engine's sessions, asked on each node: the holder's list everywhere.
    type Listed = { sessions: { id: string; descriptor: { type: string; channelId?: string } }[] };
    const onHolderList = await holder.rpc<Listed>('engine.sessions');
    const web = onHolderList.sessions.find(
      (s) => s.descriptor.type === 'user' && s.descriptor.channelId === `web|${CHAT}`,
    );
    assert.ok(web, "the web chat's session on the holder");
    for (const node of [pageNode, thirdNode]) {
      const listed = await node.rpc<Listed>('engine.sessions');
      assert.deepEqual(
        listed.sessions.map((s) => s.id),
        onHolderList.sessions.map((s) => s.id),
        'the same sessions on a node that does not serve the engine',
      );
    }
  });
});
