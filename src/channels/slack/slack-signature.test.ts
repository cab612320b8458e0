import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../core/clock.ts';
import { SIGNATURE_WINDOW_MS, slackSignature, SlackSignatureVerifier } from './slack-signature.ts';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const T0 = 1_531_420_618;

describe('Slack request signing', () => {
  it("matches Slack's documented example", () => {
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    assert.equal(
      slackSignature(SECRET, T0, body),
      'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    );
  });

  it('accepts a fresh, well-signed request once; refuses forged, stale, replayed and unsigned ones', () => {
    const clock = new ManualClock(T0 * 1000);
    const verifier = new SlackSignatureVerifier(SECRET, clock);
    const body = Buffer.from('{"type":"event_callback"}');
    const good = slackSignature(SECRET, T0, body);
    assert.equal(verifier.verify(body, String(T0), good), 'ok');
    assert.equal(verifier.verify(body, String(T0), good), 'replayed');
    assert.equal(verifier.verify(Buffer.from('{"type":"other"}'), String(T0), good), 'forged', 'body changed');
    assert.equal(verifier.verify(body, String(T0), slackSignature('other-secret', T0, body)), 'forged');
    assert.equal(verifier.verify(body, String(T0), 'v0=abc'), 'forged', 'wrong length');
    const old = T0 - SIGNATURE_WINDOW_MS / 1000 - 1;
    assert.equal(verifier.verify(body, String(old), slackSignature(SECRET, old, body)), 'stale');
    const future = T0 + SIGNATURE_WINDOW_MS / 1000 + 1;
    assert.equal(verifier.verify(body, String(future), slackSignature(SECRET, future, body)), 'stale');
    assert.equal(verifier.verify(body, undefined, good), 'missing');
    assert.equal(verifier.verify(body, String(T0), undefined), 'missing');
    assert.equal(verifier.verify(body, 'soon', good), 'missing');
  });

  it('a forgotten signature (its request failed) is welcome again; remembered ones leave with the window', () => {
    const clock = new ManualClock(T0 * 1000);
    const verifier = new SlackSignatureVerifier(SECRET, clock);
    const body = Buffer.from('x=1');
    const signature = slackSignature(SECRET, T0, body);
    assert.equal(verifier.verify(body, String(T0), signature), 'ok');
    verifier.forget(signature);
    assert.equal(verifier.verify(body, String(T0), signature), 'ok');
    // Past the window the same request is stale, whatever was remembered.
    clock.advance(SIGNATURE_WINDOW_MS + 1000);
    assert.equal(verifier.verify(body, String(T0), signature), 'stale');
  });
});
