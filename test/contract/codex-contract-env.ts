// The offline world of the Codex contract tests: the real Codex CLI (the native binary installed with @openai/codex)
// driven through createCodexHarness against the local mock Responses API, selected with the harness's
// `-c model_providers.…` overrides (never OPENAI_BASE_URL). HOME and CODEX_HOME are temp dirs per test;
// `features.plugins=false` stops the plugin marketplace sync (`git ls-remote https://github.com/openai/plugins.git`,
// api.github.com, chatgpt.com) and `analytics.enabled=false` the analytics upload (ab.chatgpt.com), both observed on a
// fresh CODEX_HOME. Every proxy variable points at a local recorder that refuses everything (NO_PROXY keeps the mock
// direct); `proxied` lists what it saw.
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { codexNativeBinary, createCodexHarness } from '../../src/coding/codex/codex-harness.ts';
import { findPackageFile } from '../../src/coding/executables.ts';
import type { Harness, RunSpec } from '../../src/coding/harness.ts';
import type { MockResponses, ResponsesBody } from '../support/mock-openai-responses.ts';
import { startMockResponses } from '../support/mock-openai-responses.ts';
import { tempDir } from '../support/temp-dir.ts';

const executable = codexNativeBinary() ?? findPackageFile('@openai/codex', 'bin/codex.js');

/** The `skip` option of a contract test: a reason when the CLI is not installed. */
export const skip = executable ? false : '@openai/codex (with its platform binary) is not installed';

/** What a contract test file works with once `codexContractEnv` has registered its hooks. */
export interface CodexContractEnv {
  /** The mock Responses API (started before the tests). */
  mock: () => MockResponses;
  /** The requests the refusing proxy saw (none is the aim). */
  proxied: string[];
  /** A fresh HOME, CODEX_HOME and workdir, and a harness on the real CLI pointed at the mock. */
  setup: () => { harness: Harness; workdir: string };
  /** A run spec for the current setup (model mock-model, bypassPermissions unless `extra` says otherwise). */
  spec: (prompt: string, workdir: string, extra?: Partial<RunSpec>) => RunSpec;
  /** The body of the n-th POST /responses request (negative: from the end). */
  bodyOf: (index: number) => ResponsesBody;
}

/** Registers before/after hooks that start and stop the mock and the proxy recorder; `prefix` names the temp dir. */
export function codexContractEnv(prefix: string): CodexContractEnv {
  let mock: MockResponses | undefined;
  const proxied: string[] = [];
  const proxy = createServer((req, res) => {
    proxied.push(`${req.method} ${req.url}`);
    res.writeHead(403).end();
  });
  proxy.on('connect', (req, socket) => {
    proxied.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  const dir = tempDir(prefix);
  let counter = 0;

  before(async () => {
    mock = await startMockResponses();
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await mock?.close();
    proxy.closeAllConnections();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    dir.remove();
  });

  const theMock = (): MockResponses => {
    if (!mock) throw new Error('the mock Responses API is not started yet');
    return mock;
  };

  function setup(): { harness: Harness; workdir: string } {
    counter += 1;
    const home = join(dir.path, `home-${counter}`);
    const workdir = join(dir.path, `work-${counter}`);
    for (const d of [join(home, '.codex'), workdir]) mkdirSync(d, { recursive: true });
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const proxies = Object.fromEntries(
      ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY'].flatMap((k) => [
        [k, proxyUrl],
        [k.toLowerCase(), proxyUrl],
      ]),
    );
    const env = {
      HOME: home,
      CODEX_HOME: join(home, '.codex'),
      MOCK_KEY: 'x',
      ...proxies,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
    };
    const harness = createCodexHarness({
      config: {
        ...(executable ? { executable } : {}),
        env,
        provider: { id: 'mock', baseUrl: `${theMock().url}/v1`, envKey: 'MOCK_KEY', wireApi: 'responses' },
        config: { 'features.plugins': false, 'analytics.enabled': false, check_for_update_on_startup: false },
      },
      killGraceMs: 2_000,
    });
    return { harness, workdir };
  }

  function spec(prompt: string, workdir: string, extra: Partial<RunSpec> = {}): RunSpec {
    return {
      sessionId: `sb-contract-${counter}`,
      prompt,
      workdir,
      model: 'mock-model',
      permissionMode: 'bypassPermissions',
      ...extra,
    };
  }

  return {
    mock: theMock,
    proxied,
    setup,
    spec,
    bodyOf: (index) => (theMock().responseRequests().at(index)?.body ?? {}) as ResponsesBody,
  };
}
