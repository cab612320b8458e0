// The built-in web page driven in headless Chromium (Debian's /usr/bin/chromium through playwright-core), over the
// daemon's real web path (see test/support/web-gateway.ts): chat with the engine (a scripted model that echoes), a chat
// command, a notification through the outbox, and a coding session's output streaming in live.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Session } from '../../src/coding/session.ts';
import { chromiumSkip, launchChromium, openWebPage } from '../support/chromium.ts';
import { waitFor } from '../support/wait-for.ts';
import type { WebGatewayFixture } from '../support/web-gateway.ts';
import { webGateway } from '../support/web-gateway.ts';

const skip = chromiumSkip(existsSync);

describe('web page in headless Chromium', { skip }, () => {
  let g: WebGatewayFixture;
  let browser: Browser;
  let page: Page;
  let session: Session;
  const problems: string[] = [];

  before(async () => {
    g = await webGateway();
    session = await g.manager.manager.launch({
      prompt: 'add a test for parse()',
      workdir: g.manager.workdir,
      originChannel: 'cli',
    });
    await g.manager.harness.last.emit(
      { type: 'started', backendSessionId: 'b-1' },
      { type: 'text', text: 'Reading parse.ts first.' },
    );
    browser = await launchChromium();
    // A phone-sized screen: one view at a time, switched by the tabs.
    page = await openWebPage(browser, `http://127.0.0.1:${g.port}/`, problems, {
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
  });

  after(async () => {
    await browser?.close();
    await g?.close();
  });

  async function chatTexts(): Promise<string[]> {
    return page.locator('#messages .msg .text').allTextContents();
  }

  it('sends a chat message and shows the reply after it', async () => {
    await page.fill('#chat-input', 'hello orchestrator');
    await page.press('#chat-input', 'Enter');
    await page.locator('.msg-agent .text', { hasText: 'echo: hello orchestrator' }).waitFor();
    await page.locator('.msg-user.msg-accepted .text', { hasText: 'hello orchestrator' }).waitFor();
    assert.deepEqual(await chatTexts(), ['hello orchestrator', 'echo: hello orchestrator']);
    assert.equal(g.inference.requests.length, 1, 'the text went to the engine, whose model answered');
  });

  it('runs /claude_sessions and shows the command answer, with no model involved', async () => {
    await page.fill('#chat-input', '/claude_ses');
    await page.locator('#command-hints code', { hasText: '/claude_sessions' }).waitFor();
    await page.fill('#chat-input', '/claude_sessions');
    await page.click('#chat-form button[type=submit]');
    const answer = page.locator('.msg-agent .text', { hasText: session.name });
    await answer.waitFor();
    assert.match((await answer.textContent()) ?? '', /add-test-parse/);
    assert.equal(g.inference.requests.length, 1);
  });

  it('shows notifications sent to its chat, as text only, and keeps them across a reload', async () => {
    const chatId = await page.evaluate('localStorage.getItem("switchboard.chatId")');
    assert.equal(typeof chatId, 'string');
    const target = { channel: 'web', chat: String(chatId) };
    await g.outbox.send(target, {
      text: `🔔 [${session.name}] asks: Which test runner? <img src=x onerror="document.title='pwned'">`,
    });
    await page.locator('.msg-agent .text', { hasText: 'asks: Which test runner?' }).waitFor();
    assert.equal(await page.locator('#messages img').count(), 0, 'agent text is never parsed as HTML');
    await page.reload();
    await page.locator('#conn', { hasText: 'connected' }).waitFor();
    await page.locator('.msg-agent .text', { hasText: 'asks: Which test runner?' }).waitFor();
    const texts = await chatTexts();
    assert.equal(texts[0], 'hello orchestrator');
    assert.equal(texts.length, 5);
    assert.notEqual(await page.title(), 'pwned');
  });

  it('lists the coding sessions and streams the selected one live', async () => {
    await page.click('#tab-sessions');
    const row = page.locator('.session-row', { hasText: session.name });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /running/);
    assert.match((await row.textContent()) ?? '', /claude/);
    await row.click();
    await page.locator('#detail-name', { hasText: session.name }).waitFor();
    await page.locator('#session-log .rec-output', { hasText: 'Reading parse.ts first.' }).waitFor();
    await g.manager.harness.last.emit(
      { type: 'tool', id: 't1', name: 'Bash', input: { command: 'npm test' } },
      { type: 'text', text: 'Writing the new test now.' },
    );
    await page.locator('#session-log .rec-tool', { hasText: 'npm test' }).waitFor();
    await page.locator('#session-log .rec-output', { hasText: 'Writing the new test now.' }).waitFor();
    await g.manager.harness.last.emit(
      { type: 'text', text: 'Which file should hold the test?' },
      { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.0123 },
    );
    await page.locator('#session-log .rec-waiting').first().waitFor();
    await page.locator('#detail-status', { hasText: 'asks (question)' }).waitFor();
    const outputs = await page.locator('#session-log .rec-output').allTextContents();
    assert.deepEqual(outputs, [
      'Reading parse.ts first.',
      'Writing the new test now.',
      'Which file should hold the test?',
    ]);
  });

  it('shows the newest 50 sessions and the older ones a page at a time', async () => {
    const { store } = g.manager;
    const template = await store.get(session.id);
    assert.ok(template);
    for (let i = 0; i < 60; i += 1) {
      await store.insert({
        ...template,
        id: `old-${i}`,
        name: `old-${String(i).padStart(2, '0')}`,
        status: 'completed',
        startedAt: template.startedAt - 1_000 + i,
        backendSessionId: null,
      });
    }
    await page.click('#session-back');
    await page.locator('.session-list .more button', { hasText: 'Show older sessions' }).waitFor();
    assert.equal(await page.locator('.session-row').count(), 50);
    await page.click('.session-list .more button');
    await page.locator('.session-row', { hasText: 'old-00' }).waitFor();
    assert.equal(await page.locator('.session-row').count(), 61);
    assert.equal(await page.locator('.session-list .more').count(), 0);
    await page.locator('.session-row', { hasText: session.name }).click();
    await page.locator('#detail-name', { hasText: session.name }).waitFor();
  });

  it('sends a message to the selected session', async () => {
    await page.fill('#session-input', 'put it in test/parse.test.ts');
    await page.click('#session-form button[type=submit]');
    await page.locator('#session-log .rec-user', { hasText: 'put it in test/parse.test.ts' }).waitFor();
    assert.deepEqual(g.manager.harness.last.sent, ['put it in test/parse.test.ts']);
    await page.locator('#detail-status', { hasText: 'running' }).waitFor();
    // The page clears the input once the send is acknowledged, which may come after the message shows in the log.
    await waitFor('the input to be cleared', async () => (await page.locator('#session-input').inputValue()) === '');
  });

  it('raised no page errors, console errors or CSP violations', async () => {
    assert.deepEqual(problems, []);
  });
});

describe('web page login in headless Chromium (channels.web.requireLogin)', { skip }, () => {
  let g: WebGatewayFixture;
  let browser: Browser;

  before(async () => {
    g = await webGateway({ overrides: { channels: { web: { requireLogin: true } } } });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await g?.close();
  });

  it('asks for the gateway token once, refuses a wrong one, then keeps the page logged in with a cookie scripts cannot read', async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${g.port}/`);
    await page.fill('#token', g.webToken);
    await page.click('.login-form button[type=submit]');
    await page.locator('.login-error', { hasText: 'not the gateway token' }).waitFor();
    await page.fill('#token', g.gatewayToken);
    await page.click('.login-form button[type=submit]');
    await page.locator('#conn', { hasText: 'connected' }).waitFor();
    assert.equal(new URL(page.url()).search, '', 'the token never appears in a URL');
    assert.equal(await page.evaluate('document.cookie'), '', 'the cookie is HttpOnly');
    await page.fill('#chat-input', 'logged in');
    await page.press('#chat-input', 'Enter');
    await page.locator('.msg-agent .text', { hasText: 'echo: logged in' }).waitFor();
    await page.reload();
    await page.locator('.msg-agent .text', { hasText: 'echo: logged in' }).waitFor();
    assert.equal(await page.locator('.login-form').count(), 0);
  });
});
