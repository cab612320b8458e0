// Shared set-up of the inference tests: the four mock model servers, provider config entries pointing at them (with
// fake API keys containing SECRET, so a test can assert no key reaches a log line), and an Inference whose log lines are
// captured.
import assert from 'node:assert/strict';
import { inferenceSchema } from '../../src/core/config-inference.ts';
import type { InferenceOptions } from '../../src/inference/inference.ts';
import { createInference } from '../../src/inference/inference.ts';
import type { Inference, InferenceRequest } from '../../src/inference/types.ts';
import type { LogLine } from './log-capture.ts';
import { captureLogger } from './log-capture.ts';
import type { MockAnthropic } from './mock-anthropic.ts';
import { startMockAnthropic } from './mock-anthropic.ts';
import type { MockGemini } from './mock-gemini.ts';
import { startMockGemini } from './mock-gemini.ts';
import type { MockOpenAIChat } from './mock-openai-chat.ts';
import { startMockOpenAIChat } from './mock-openai-chat.ts';
import type { MockResponses } from './mock-openai-responses.ts';
import { startMockResponses } from './mock-openai-responses.ts';
import { freePort } from './ports.ts';

export const ANTHROPIC_KEY = 'sk-ant-SECRET-0001';
export const OPENAI_KEY = 'sk-proj-SECRET-0002';
export const GOOGLE_KEY = 'AIza-SECRET-0003';

/** A plain one-message request from a user session. */
export const REQUEST: InferenceRequest = {
  system: 'sys',
  messages: [{ role: 'user', content: 'status?' }],
  tools: [],
  sessionId: 'user:telegram:42',
};

type Entry = Record<string, unknown>;

export interface ModelMocks {
  anthropic: MockAnthropic;
  chat: MockOpenAIChat;
  gemini: MockGemini;
  responses: MockResponses;
  /** Provider entries (`inference.providers[]`) pointing at each mock; `extra` overrides any key. */
  anthropicProvider(extra?: Entry): Entry;
  /** openai with api 'chat' (id 'openai'). */
  chatProvider(extra?: Entry): Entry;
  /** openai with the Responses API (id 'openai-responses'). */
  responsesProvider(extra?: Entry): Entry;
  geminiProvider(extra?: Entry): Entry;
  close(): Promise<void>;
}

/** Starts the four mock model servers on 127.0.0.1. */
export async function startModelMocks(): Promise<ModelMocks> {
  const [anthropic, chat, gemini, responses] = await Promise.all([
    startMockAnthropic(),
    startMockOpenAIChat(),
    startMockGemini(),
    startMockResponses(),
  ]);
  return {
    anthropic,
    chat,
    gemini,
    responses,
    anthropicProvider: (extra = {}) => ({
      kind: 'anthropic',
      model: 'claude-mock-1',
      apiKey: ANTHROPIC_KEY,
      baseUrl: `${anthropic.url}/v1`,
      maxOutputTokens: 256,
      ...extra,
    }),
    chatProvider: (extra = {}) => ({
      kind: 'openai',
      api: 'chat',
      model: 'gpt-mock',
      apiKey: OPENAI_KEY,
      baseUrl: `${chat.url}/v1`,
      ...extra,
    }),
    responsesProvider: (extra = {}) => ({
      id: 'openai-responses',
      kind: 'openai',
      model: 'gpt-mock-r',
      apiKey: OPENAI_KEY,
      baseUrl: `${responses.url}/v1`,
      ...extra,
    }),
    geminiProvider: (extra = {}) => ({
      kind: 'google',
      model: 'gemini-mock',
      apiKey: GOOGLE_KEY,
      baseUrl: `${gemini.url}/v1beta`,
      ...extra,
    }),
    close: async () => {
      await Promise.all([anthropic.close(), chat.close(), gemini.close(), responses.close()]);
    },
  };
}

export interface BuiltInference {
  inference: Inference;
  /** Every log line, raw (to assert no secret is in it). */
  raw: () => string;
  /** The log lines whose message matches. */
  logged: (msg: RegExp) => LogLine[];
}

/** Builds an Inference over the given provider entries (and other section keys), logging into memory. */
export function buildInference(
  providers: Entry[],
  options: InferenceOptions & { section?: Entry } = {},
): BuiltInference {
  const capture = captureLogger();
  const { section, ...rest } = options;
  const inference = createInference(inferenceSchema.parse({ providers, ...section }), capture.logger, {
    env: {},
    ...rest,
  });
  const logged = (msg: RegExp): LogLine[] =>
    capture.lines().filter((line) => typeof line.msg === 'string' && msg.test(line.msg));
  return { inference, raw: capture.raw, logged };
}

/** A port nothing listens on (bound, then closed). */
export const closedPort = freePort;

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return assert.fail('expected the call to fail');
}
