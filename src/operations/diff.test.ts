import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, it } from 'node:test';
import { commitFile, initRepo } from '../../test/support/git-repo.ts';
import { managerPerTest } from '../../test/support/manager-fixture.ts';
import { MAX_FILE_BYTES } from '../channels/outbox-file.ts';
import { runCommand, runCommandReply } from './commands.ts';
import type { Caller, OperationServices } from './operation.ts';
import { OPERATIONS } from './table.ts';
import { runTool } from './tools.ts';

const chat: Caller = { kind: 'chat', channel: 'telegram|42', userId: '42' };
const agent: Caller = { kind: 'agent', sessionId: 'eng-1', channel: 'telegram|42' };

describe('session_diff as a chat command and a tool', () => {
  const { f } = managerPerTest();
  let services: OperationServices;
  beforeEach(() => {
    services = { config: f.config, sessions: f.manager, clock: f.clock };
  });

  it('/claude_diff answers the stat summary and the patch inline; claude_diff gives the orchestrator the same', async () => {
    const repo = initRepo(join(f.workdir, 'repo'));
    await f.manager.launch({ prompt: 'p', name: 'worker', workdir: repo, originChannel: 'cli' });
    commitFile(repo, 'lib.ts', 'export const one = 1;\n');
    writeFileSync(join(repo, 'new.ts'), 'export const two = 2;\n');

    const reply = (await runCommand(OPERATIONS, '/claude_diff worker', chat, services)) ?? '';
    assert.match(reply, /^worker: 2 files changed, \+2 -0 since [0-9a-f]{12}$/m);
    assert.match(reply, /^A \+1 -0 lib\.ts$/m);
    assert.match(reply, /^A \+1 -0 new\.ts$/m);
    assert.match(reply, /^```diff\n(?:.*\n)*\+export const two = 2;\n```$/m);

    const tool = await runTool(OPERATIONS, 'claude_diff', { session: 'worker', stat: true }, agent, services);
    assert.equal(tool.isError, false);
    const text = JSON.stringify(tool);
    assert.match(text, /new\.ts/);
    assert.doesNotMatch(text, /diff --git/);

    const usage = (await runCommand(OPERATIONS, '/claude_diff', chat, services)) ?? '';
    assert.match(usage, /Usage: \/claude_diff <id-or-name>/);
  });

  it('/claude_diff answers the stat summary as the text and the patch as <session>.patch, the inline form beside it', async () => {
    const repo = initRepo(join(f.workdir, 'repo'));
    await f.manager.launch({ prompt: 'p', name: 'worker', workdir: repo, originChannel: 'cli' });
    commitFile(repo, 'lib.ts', 'export const one = 1;\n');
    writeFileSync(join(repo, 'new.ts'), 'export const two = 2;\n');

    const reply = await runCommandReply(OPERATIONS, '/claude_diff worker', chat, services);
    assert.ok(reply?.file, 'a file');
    assert.match(reply.text, /^worker: 2 files changed, \+2 -0 since [0-9a-f]{12}$/m);
    assert.match(reply.text, /^A \+1 -0 new\.ts$/m);
    assert.doesNotMatch(reply.text, /```/, 'the patch is not in the text');
    assert.equal(reply.file.name, 'worker.patch');
    assert.equal(reply.file.contentType, 'text/x-diff');
    assert.match(reply.file.content, /^diff --git a\/lib\.ts b\/lib\.ts$/m);
    assert.match(reply.file.content, /^\+export const two = 2;$/m);
    assert.equal(reply.file.inline, await runCommand(OPERATIONS, '/claude_diff worker', chat, services));

    const stat = await runCommandReply(OPERATIONS, '/claude_diff --stat worker', chat, services);
    assert.equal(stat?.file, undefined, 'no patch, no file');
  });

  it('sends a large patch whole as the file while the inline form is cut', async () => {
    const repo = initRepo(join(f.workdir, 'big'));
    await f.manager.launch({ prompt: 'p', name: 'big', workdir: repo, originChannel: 'cli' });
    writeFileSync(join(repo, 'large.txt'), `${'a line of generated text\n'.repeat(3000)}`);
    const reply = await runCommandReply(OPERATIONS, '/claude_diff big', chat, services);
    assert.equal(reply?.file?.content.match(/^\+a line of generated text$/gm)?.length, 3000);
    assert.doesNotMatch(reply?.text ?? '', /was cut/);
    assert.match(reply?.file?.inline ?? '', /The patch was cut/);
  });

  it('cuts a patch file over the 8 MiB a message carries, saying so in the text and on its last line', async () => {
    const repo = initRepo(join(f.workdir, 'huge'));
    await f.manager.launch({ prompt: 'p', name: 'huge', workdir: repo, originChannel: 'cli' });
    writeFileSync(join(repo, 'huge.txt'), `${'x'.repeat(99)}\n`.repeat(90_000));
    const reply = await runCommandReply(OPERATIONS, '/claude_diff huge', chat, services);
    const content = reply?.file?.content ?? '';
    assert.ok(Buffer.byteLength(content) <= MAX_FILE_BYTES, `${Buffer.byteLength(content)} bytes`);
    assert.ok(Buffer.byteLength(content) > MAX_FILE_BYTES - 4096, 'filled up to the limit');
    assert.match(content, /\n# switchboard: the patch was cut here; see it whole with `switchboard diff huge`\n$/);
    assert.match(
      reply?.text ?? '',
      /The patch file was cut at \d+ bytes\. See it whole with `switchboard diff huge`\./,
    );
  });

  it('cuts a patch larger than a chat holds and says where to see it whole', async () => {
    const repo = initRepo(join(f.workdir, 'big'));
    await f.manager.launch({ prompt: 'p', name: 'big', workdir: repo, originChannel: 'cli' });
    writeFileSync(join(repo, 'large.txt'), `${'a line of generated text\n'.repeat(3000)}`);
    const reply = (await runCommand(OPERATIONS, '/claude_diff big', chat, services)) ?? '';
    assert.match(reply, /^A \+3000 -0 large\.txt$/m);
    assert.match(reply, /The patch was cut/);
    assert.ok(reply.length < 30_000, `a chat answer stays a few messages long (${reply.length})`);
  });

  it('fences the patch with more backticks than any line of it opens with', async () => {
    const repo = initRepo(join(f.workdir, 'docs'));
    commitFile(repo, 'guide.md', 'Run:\n\n````sh\nnpm test\n````\n');
    await f.manager.launch({ prompt: 'p', name: 'docs', workdir: repo, originChannel: 'cli' });
    writeFileSync(join(repo, 'guide.md'), 'Run:\n\n````sh\nnpm run test\n````\n');
    const reply = (await runCommand(OPERATIONS, '/claude_diff docs', chat, services)) ?? '';
    // The context lines " ````sh" and " ````" would close a ```` fence: this one is longer.
    assert.match(reply, /^`````diff$/m);
    assert.match(reply, /^ ````sh$/m);
    assert.ok(reply.endsWith('\n`````'));
  });
});
