// Approvals on the built-in web page, end to end: the real daemon process (with the fake Claude, which asks permission
// through `can_use_tool` when the permission mode is not bypassPermissions) and the page in headless Chromium. A
// session launched with permissionMode `default` asks for Bash; the session view shows the pending approval and
// "Allow for session" decides it (the tool runs, the turn ends) and shows the outcome. A second session's approval
// message in the chat carries the buttons; pressing Allow posts `/approve <id>`, which decides it, and the daemon's
// edit takes the buttons away.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { Approval } from '../../src/approvals/approval.ts';
import { chromiumSkip, launchChromium, openWebPage } from '../support/chromium.ts';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { unexpectedErrors } from '../support/e2e-daemon.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const skip = chromiumSkip(existsSync);

interface Output {
  lines: string[];
}

describe('approvals on the web page, with the real daemon and Chromium', { skip }, () => {
  const dir = tempDir('sb-web-approvals-');
  const home = join(dir.path, 'home');
  const workdir = join(dir.path, 'work');
  let daemon: DaemonProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let chatId: string;
  const problems: string[] = [];

  before(async () => {
    mkdirSync(home, { recursive: true });
    mkdirSync(workdir, { recursive: true });
    const config = {
      workspaces: [dir.path],
      log: { level: 'warn' },
      harnesses: { claude: { executable: FAKE_CLAUDE } },
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
    daemon = await startDaemonProcess(home);
    browser = await launchChromium();
    page = await openWebPage(browser, `${daemon.url}/`, problems);
    chatId = String(await page.evaluate('localStorage.getItem("switchboard.chatId")'));
  });

  after(async () => {
    await browser?.close();
    if (daemon && daemon.child.exitCode === null) {
      daemon.child.kill('SIGTERM');
      await daemon.exited();
    }
    await killDaemonProcess(daemon);
    dir.remove();
  });

  /** The session's approvals, as approvals.list answers them. */
  async function approvalsOf(session: string): Promise<Approval[]> {
    const listed = await daemon?.rpc<{ approvals: Approval[] }>('approvals.list', { session });
    return listed?.approvals ?? [];
  }

  async function launch(name: string, directive = '[[tool]]'): Promise<void> {
    await daemon?.rpc('sessions.launch', {
      prompt: `check the build ${directive}`,
      workdir,
      name,
      permissionMode: 'default',
      channel: `web|${chatId}`,
    });
  }

  it('shows a session’s pending approval, and "Allow for session" lets the agent go on and shows the outcome', async () => {
    await launch('asks');
    await page.locator('.session-row', { hasText: 'asks' }).click();
    const panel = page.locator('#session-approval');
    await panel.locator('.approval-summary', { hasText: 'Bash' }).waitFor();
    assert.match((await panel.locator('.approval-input pre').textContent()) ?? '', /echo hello-from-tool/);
    await page.locator('#detail-status', { hasText: 'asks (permission)' }).waitFor();

    await panel.locator('button', { hasText: 'Allow for session' }).click();
    await panel.locator('.approval-outcome', { hasText: 'allowed for session by web' }).waitFor();
    assert.equal(await panel.locator('button').count(), 0);
    await page.locator('#session-log .rec-output', { hasText: 'tool said: hello-from-tool' }).waitFor();
    await page.locator('#session-log .rec-turn', { hasText: 'turn ended' }).waitFor();

    const [approval] = await approvalsOf('asks');
    assert.deepEqual([approval?.status, approval?.scope], ['allowed', 'session']);
    const output = await daemon?.rpc<Output>('sessions.output', { session: 'asks', full: true });
    assert.ok(output?.lines.some((l) => l.includes('tool said: hello-from-tool')));
  });

  it('shows the approval message in the chat with its buttons; pressing Allow decides it and the edit removes them', async () => {
    await launch('asks-again');
    const pending = await waitFor('the second session’s approval', async () => {
      const [a] = await approvalsOf('asks-again');
      return a?.status === 'pending' ? a : undefined;
    });
    const message = page.locator('#messages .msg-agent', {
      has: page.locator(`button[title="/approve ${pending.id}"]`),
    });
    await message.waitFor();
    const labels = await message.locator('button.choice').allTextContents();
    for (const label of ['Allow', 'Allow for session', 'Always', 'Deny']) assert.ok(labels.includes(label), label);

    const pos = await message.getAttribute('data-pos');
    await message.locator(`button[title="/approve ${pending.id}"]`).click();
    await page.locator('.msg-user .text', { hasText: `/approve ${pending.id}` }).waitFor();
    const decided = await waitFor('the press to decide the approval', async () => {
      const [a] = await approvalsOf('asks-again');
      return a && a.status !== 'pending' ? a : undefined;
    });
    assert.deepEqual([decided.status, decided.scope, decided.decidedBy], ['allowed', 'once', 'web']);
    await waitFor('the agent to go on', async () => {
      const output = await daemon?.rpc<Output>('sessions.output', { session: 'asks-again', full: true });
      return output?.lines.some((l) => l.includes('tool said: hello-from-tool'));
    });
    const edited = page.locator(`#messages .msg-agent[data-pos="${pos}"]`);
    await edited.waitFor();
    await waitFor(
      'the daemon’s edit to take the buttons away',
      async () => (await edited.locator('button').count()) === 0,
    );
  });

  it('denies with a reason from the session view, and the agent gets the reason', async () => {
    await launch('denied');
    await page.locator('.session-row', { hasText: 'denied' }).click();
    const panel = page.locator('#session-approval');
    await panel.locator('.approval-summary', { hasText: 'Bash' }).waitFor();
    await panel.locator('.approval-reason').fill('not on this branch');
    await panel.locator('button', { hasText: 'Deny' }).click();
    await panel.locator('.approval-outcome', { hasText: /denied by .*: not on this branch/ }).waitFor();
    const [approval] = await approvalsOf('denied');
    assert.deepEqual([approval?.status, approval?.message], ['denied', 'not on this branch']);
    await page.locator('#session-log .rec-output', { hasText: 'not on this branch' }).waitFor();
  });

  it('stores an "Always" answer as a rule, listed under Approval rules, and removes it there', async () => {
    await launch('always');
    await page.locator('.session-row', { hasText: 'always' }).click();
    const panel = page.locator('#session-approval');
    await panel.locator('.approval-summary', { hasText: 'Bash' }).waitFor();
    await panel.locator('button', { hasText: 'Always' }).click();
    await panel.locator('.approval-outcome', { hasText: 'allowed always by' }).waitFor();
    await page.locator('#session-log .rec-output', { hasText: 'tool said: hello-from-tool' }).waitFor();

    const rules = page.locator('#approval-rules');
    await rules.locator('summary').click();
    const rule = rules.locator('.rule', { hasText: 'Bash' });
    await rule.waitFor();
    await rule.locator('button', { hasText: 'Remove' }).click();
    await waitFor('the rule to be gone from the list', async () => (await rule.count()) === 0);
    const stored = await daemon?.rpc<{ rules: { rule: string; source: string }[] }>('approvals.rules', {});
    assert.deepEqual(
      stored?.rules.filter((r) => r.source !== 'config' && r.rule.startsWith('Bash')),
      [],
      'removed from the store',
    );
  });

  it('shows a question’s options as buttons, and a press answers it', async () => {
    await launch('question', '[[question]]');
    await page.locator('.session-row', { hasText: 'question' }).click();
    const panel = page.locator('#session-approval');
    await panel.locator('.approval-question', { hasText: 'Which file should I change?' }).waitFor();
    assert.deepEqual(await panel.locator('.approval-question button').allTextContents(), ['a.ts', 'b.ts']);
    await panel.locator('.approval-question button', { hasText: 'b.ts' }).click();
    await panel.locator('.approval-outcome', { hasText: /allowed once by web: .*b\.ts/ }).waitFor();
    const [approval] = await approvalsOf('question');
    assert.deepEqual([approval?.kind, approval?.status], ['question', 'allowed']);
    await page.locator('#session-log .rec-turn', { hasText: 'turn ended' }).waitFor();
  });

  it('raised no page errors, console errors or daemon errors', () => {
    assert.deepEqual(problems, []);
    assert.deepEqual(unexpectedErrors(daemon?.output() ?? ''), []);
  });
});
