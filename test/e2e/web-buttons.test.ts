// The web page's buttons in headless Chromium, over the daemon's real web path (test/support/web-gateway.ts) with an
// inbound handler that records what the page sends: a daemon message's buttons render under it, a press posts the
// button's command marked pressed and disables the message's buttons, and the daemon's edit redraws the message in
// place. In the session view, an approval record of the session's log shows the pending request with its buttons,
// and a later record of its decision (made elsewhere) shows the outcome instead.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Approval } from '../../src/approvals/approval.ts';
import type { InboundMessage } from '../../src/channels/connector.ts';
import type { Session } from '../../src/coding/session.ts';
import { chromiumSkip, launchChromium, openWebPage } from '../support/chromium.ts';
import { waitFor } from '../support/wait-for.ts';
import type { WebGatewayFixture } from '../support/web-gateway.ts';
import { webGateway } from '../support/web-gateway.ts';

const skip = chromiumSkip(existsSync);

describe('web page buttons in headless Chromium', { skip }, () => {
  let g: WebGatewayFixture;
  let browser: Browser;
  let page: Page;
  let session: Session;
  const received: InboundMessage[] = [];
  const problems: string[] = [];

  before(async () => {
    g = await webGateway({ handler: () => async (m) => void received.push(m) });
    session = await g.manager.manager.launch({
      prompt: 'run the tests',
      workdir: g.manager.workdir,
      originChannel: 'cli',
    });
    await g.manager.harness.last.emit({ type: 'started', backendSessionId: 'b-1' });
    browser = await launchChromium();
    page = await openWebPage(browser, `http://127.0.0.1:${g.port}/`, problems);
  });

  after(async () => {
    await browser?.close();
    await g?.close();
  });

  it('renders a message’s buttons, posts a press as the command marked pressed, and redraws the edit in place', async () => {
    const chatId = String(await page.evaluate('localStorage.getItem("switchboard.chatId")'));
    const target = { channel: 'web', chat: chatId };
    const sent = await g.connector.send(target, {
      text: '🔐 [run-tests] wants to run Bash: npm test',
      buttons: [
        [
          { label: 'Allow', command: '/approve k3x9q' },
          { label: 'Allow for session', command: '/approve k3x9q session' },
        ],
        [
          { label: 'Always', command: '/approve k3x9q always' },
          { label: 'Deny', command: '/deny k3x9q' },
        ],
      ],
    });
    assert.ok(sent);
    const message = page.locator(`#messages .msg-agent[data-pos="${sent.ref}"]`);
    await message.locator('.text', { hasText: 'wants to run Bash: npm test' }).waitFor();
    assert.deepEqual(await message.locator('button.choice').allTextContents(), [
      'Allow',
      'Allow for session',
      'Always',
      'Deny',
    ]);

    await message.locator('button.choice', { hasText: 'Allow for session' }).click();
    await waitFor('the press reached the inbound handler', () => received.length === 1 || undefined);
    assert.deepEqual(
      received.map((m) => [m.text, m.pressed, m.target]),
      [['/approve k3x9q session', true, target]],
    );
    await page.locator('.msg-user.msg-accepted .text', { hasText: '/approve k3x9q session' }).waitFor();
    assert.deepEqual(
      await message.locator('button.choice').evaluateAll((buttons) => buttons.map((b) => b.hasAttribute('disabled'))),
      [true, true, true, true],
      'the buttons wait for the daemon’s edit',
    );

    await g.connector.edit(target, sent.ref, { text: '🔐 [run-tests] Bash: npm test — allowed for session by web' });
    await message.locator('.text', { hasText: 'allowed for session by web' }).waitFor();
    assert.equal(await message.locator('button').count(), 0, 'the edit removed the buttons');
    assert.equal(await page.locator(`#messages [data-pos="${sent.ref}"]`).count(), 1, 'redrawn in place');
  });

  it('shows a session’s pending approval from its log, and the outcome once the log says it was decided', async () => {
    const approval: Approval = {
      id: 'k3x9q',
      sessionId: session.id,
      session: session.name,
      kind: 'tool',
      tool: 'Bash',
      input: { command: 'npm test' },
      summary: 'Bash: npm test',
      questions: [],
      status: 'pending',
      scope: null,
      decidedBy: null,
      message: null,
      createdAt: Date.now(),
      decidedAt: null,
    };
    await g.manager.logs.append(session.id, { type: 'approval', approval });
    await page.locator('.session-row', { hasText: session.name }).click();
    const panel = page.locator('#session-approval');
    await panel.locator('.approval-summary', { hasText: 'Bash: npm test' }).waitFor();
    assert.deepEqual(await panel.locator('.approval-actions button').allTextContents(), [
      'Allow',
      'Allow for session',
      'Always',
      'Deny',
    ]);
    assert.match((await panel.locator('.approval-input pre').textContent()) ?? '', /"command": "npm test"/);
    await page.locator('#session-log .rec-question', { hasText: 'Bash: npm test' }).waitFor();

    await g.manager.logs.append(session.id, {
      type: 'approval',
      approval: { ...approval, status: 'allowed', scope: 'session', decidedBy: 'telegram|42', decidedAt: Date.now() },
    });
    await panel.locator('.approval-outcome', { hasText: 'allowed for session by telegram|42' }).waitFor();
    assert.equal(await panel.locator('button').count(), 0, 'no buttons once decided');
    await page.locator('#session-log .rec-meta', { hasText: 'allowed for session by telegram|42' }).waitFor();
  });

  it('shows a question’s options as buttons', async () => {
    await g.manager.logs.append(session.id, {
      type: 'approval',
      approval: {
        id: 'q7w2e',
        sessionId: session.id,
        session: session.name,
        kind: 'question',
        tool: 'AskUserQuestion',
        input: {},
        summary: 'Which file should I change?',
        questions: [
          { question: 'Which file should I change?', header: 'File', options: ['a.ts', 'b.ts'], multiSelect: false },
        ],
        status: 'pending',
        scope: null,
        decidedBy: null,
        message: null,
        createdAt: Date.now(),
        decidedAt: null,
      },
    });
    const panel = page.locator('#session-approval');
    await panel.locator('.approval-question', { hasText: 'File: Which file should I change?' }).waitFor();
    assert.deepEqual(await panel.locator('.approval-question button').allTextContents(), ['a.ts', 'b.ts']);
    assert.equal(await panel.locator('.approval-deny button', { hasText: 'Deny' }).count(), 1);
  });

  it('raised no page errors, console errors or CSP violations', async () => {
    assert.deepEqual(problems, []);
  });
});
