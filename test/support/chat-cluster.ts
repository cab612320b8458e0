// A cluster of daemon processes serving one Telegram chat: the fake Telegram, the mock model and the rig, started
// together and stopped together, with the model's requests and the chat's texts at hand. The e2e cluster tests that
// talk to the engine through Telegram share it.
import { after, before } from 'node:test';
import type { ClusterRig, NodeSpec, RigOptions } from './cluster-rig.ts';
import { startClusterRig } from './cluster-rig.ts';
import { chatInference, telegramSection, textsTo } from './e2e-daemon.ts';
import type { FakeTelegram } from './fake-telegram.ts';
import { startFakeTelegram } from './fake-telegram.ts';
import type { ChatBody, ChatHandler, MockOpenAIChat } from './mock-openai-chat.ts';
import { startMockOpenAIChat } from './mock-openai-chat.ts';

/** The running parts, and what the tests read of them. */
export interface ChatCluster {
  rig: ClusterRig;
  telegram: FakeTelegram;
  model: MockOpenAIChat;
  /** Every chat completion request the model received, in order. */
  bodies: () => ChatBody[];
  /** The texts sent to the user's chat, in order. */
  chat: () => string[];
  /** Stops the rig, then the fakes. */
  stop: () => Promise<void>;
}

/**
 * Starts the fakes and a rig of `specs` whose nodes serve Telegram to `user` (the web page off, heartbeats off) with
 * the mock model answering through `handler`; `options.config` is merged over that. If the rig cannot start, the fakes
 * are closed before the error is thrown.
 */
export async function startChatCluster(
  prefix: string,
  specs: readonly NodeSpec[],
  options: RigOptions & { user: number; handler: ChatHandler },
): Promise<ChatCluster> {
  const { user, handler, config, ...rigOptions } = options;
  const telegram = await startFakeTelegram();
  const model = await startMockOpenAIChat({ handler });
  let rig: ClusterRig;
  try {
    rig = await startClusterRig(prefix, specs, {
      ...rigOptions,
      config: {
        channels: { telegram: telegramSection(telegram, [user]), web: { enabled: false } },
        inference: chatInference(model.url),
        heartbeat: { intervalMinutes: 0 },
        ...config,
      },
    });
  } catch (error) {
    await telegram.close();
    await model.close();
    throw error;
  }
  return {
    rig,
    telegram,
    model,
    bodies: () => model.completionRequests().map((r) => r.body as ChatBody),
    chat: () => textsTo(telegram, user),
    stop: async () => {
      await rig.stop();
      await telegram.close();
      await model.close();
    },
  };
}

/** What a suite reads of its chat cluster; each throws when the cluster did not start. */
export interface ChatClusterSuite {
  cluster: () => ClusterRig;
  telegram: () => FakeTelegram;
  bodies: () => ChatBody[];
  chat: () => string[];
}

/**
 * Starts the chat cluster `start` makes before the suite's tests and stops it after them (`beforeStop` first, e.g.
 * to let held model answers go). Call it inside `describe`.
 */
export function chatClusterPerSuite(
  start: () => Promise<ChatCluster>,
  options: { beforeStop?: () => void } = {},
): ChatClusterSuite {
  let running: ChatCluster | undefined;
  const started = (): ChatCluster => {
    if (!running) throw new Error('the rig did not start');
    return running;
  };
  before(async () => {
    running = await start();
  });
  after(async () => {
    options.beforeStop?.();
    await running?.stop();
  });
  return {
    cluster: () => started().rig,
    telegram: () => started().telegram,
    bodies: () => started().bodies(),
    chat: () => started().chat(),
  };
}
