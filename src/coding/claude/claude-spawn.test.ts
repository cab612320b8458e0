import assert from 'node:assert/strict';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import type { SpawnedProcess } from '@anthropic-ai/claude-agent-sdk';
import { SESSION_ENV_TAG } from '../agent-process.ts';
import { ClaudeSpawner } from './claude-spawn.ts';

const INIT = JSON.stringify({ type: 'system', subtype: 'init', session_id: 's1' });
const RESULT = JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok', session_id: 's1' });

/** A script for `node -e` that prints `lines` on stdout, `stderr` on stderr, then exits with `code`. */
function printer(lines: string[], stderr: string, code: number): string {
  return `for (const l of ${JSON.stringify(lines)}) process.stdout.write(l + '\\n');
process.stdout.write(JSON.stringify({ type: 'probe', tag: process.env.${SESSION_ENV_TAG} }) + '\\n');
process.stderr.write(${JSON.stringify(stderr)});
process.exitCode = ${code};`;
}

function readAll(proc: SpawnedProcess): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    proc.stdout.on('end', () => resolve(out));
  });
}

function exitOf(proc: SpawnedProcess): Promise<[number | null, NodeJS.Signals | null]> {
  return new Promise((resolve) => proc.once('exit', (code, signal) => resolve([code, signal])));
}

describe('ClaudeSpawner', () => {
  it('passes good lines through unchanged, drops and reports malformed ones, tags the env, keeps stderr', async () => {
    const malformed: [string, string][] = [];
    const spawner = new ClaudeSpawner({
      sessionId: 'sb-42',
      killGraceMs: 1_000,
      onMalformed: (line, reason) => malformed.push([line, reason]),
    });
    const lines = [INIT, 'not json at all', '{"type":"assistant","message":42}', '', RESULT];
    const proc = spawner.spawn({
      command: 'node',
      args: ['-e', printer(lines, 'oops on stderr\n', 2)],
      cwd: tmpdir(),
      env: { ...process.env, PATH: '' },
      signal: new AbortController().signal,
    });
    const [out, [code, signal]] = await Promise.all([readAll(proc), exitOf(proc)]);
    // The pid is known once the process has started.
    assert.ok(spawner.pid && spawner.pid > 0);
    assert.equal(out, `${INIT}\n${RESULT}\n${JSON.stringify({ type: 'probe', tag: 'sb-42' })}\n`);
    assert.deepEqual(
      malformed.map(([line]) => line),
      ['not json at all', '{"type":"assistant","message":42}'],
    );
    assert.match(malformed[1]?.[1] ?? '', /assistant message failed its schema/);
    assert.equal(code, 2);
    assert.equal(signal, null);
    assert.equal(proc.exitCode, 2);
    assert.equal(spawner.stderrTail, 'oops on stderr');
    assert.deepEqual(spawner.lineCounts, { good: 3, malformed: 2 });
    assert.deepEqual(await spawner.exited, { code: 2, signal: null });
  });

  it('reports the exit only after every good line is readable (a last result is never lost)', async () => {
    const spawner = new ClaudeSpawner({ sessionId: 's', killGraceMs: 1_000, onMalformed: () => {} });
    const script = `let out = ''; for (let i = 0; i < 2000; i++) out += JSON.stringify({ type: 'stream_event', event: { type: 'ping' }, i }) + '\\n';
process.stdout.write(out + ${JSON.stringify(RESULT)} + '\\n'); process.exitCode = 1;`;
    const proc = spawner.spawn({
      command: process.execPath,
      args: ['-e', script],
      env: process.env,
      signal: new AbortController().signal,
    });
    let linesAtExit = -1;
    let text = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      text += chunk;
    });
    const ended = once(proc.stdout, 'end');
    proc.once('exit', () => {
      linesAtExit = spawner.lineCounts.good;
    });
    await ended;
    await spawner.exited;
    assert.equal(linesAtExit, 2_001);
    assert.ok(text.includes(RESULT));
  });

  it('kill(SIGTERM) escalates to SIGKILL after the grace period', async () => {
    const spawner = new ClaudeSpawner({ sessionId: 's', killGraceMs: 300, onMalformed: () => {} });
    const proc = spawner.spawn({
      command: process.execPath,
      args: [
        '-e',
        `process.on('SIGTERM', () => {}); console.log(${JSON.stringify(INIT)}); setInterval(() => {}, 1000);`,
      ],
      env: process.env,
      signal: new AbortController().signal,
    });
    // The child prints INIT once its SIGTERM handler is installed.
    const printed = once(proc.stdout, 'data');
    const stdout = readAll(proc);
    await printed;
    const started = Date.now();
    assert.equal(proc.kill('SIGTERM'), true);
    const [code, signal] = await exitOf(proc);
    assert.equal(code, null);
    assert.equal(signal, 'SIGKILL');
    assert.ok(Date.now() - started >= 250, 'waited for the grace period');
    assert.equal(proc.kill('SIGTERM'), false);
    assert.equal(await stdout, `${INIT}\n`);
  });

  it('the forwarded abort signal stops the process', async () => {
    const spawner = new ClaudeSpawner({ sessionId: 's', killGraceMs: 2_000, onMalformed: () => {} });
    const abort = new AbortController();
    const proc = spawner.spawn({
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      env: process.env,
      signal: abort.signal,
    });
    abort.abort();
    const [, signal] = await exitOf(proc);
    assert.equal(signal, 'SIGTERM');
  });

  it('a command that cannot start emits error and resolves exited with the spawn error', async () => {
    const spawner = new ClaudeSpawner({ sessionId: 's', killGraceMs: 1_000, onMalformed: () => {} });
    const proc = spawner.spawn({
      command: '/nonexistent/claude',
      args: [],
      env: process.env,
      signal: new AbortController().signal,
    });
    const error = await new Promise<Error>((resolve) => proc.once('error', resolve));
    assert.match(error.message, /could not start Claude Code \(\/nonexistent\/claude\).*ENOENT/);
    assert.match((await spawner.exited).spawnError ?? '', /ENOENT/);
  });
});
