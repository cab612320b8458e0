import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dispatchRecord } from '../../../test/support/dispatch-record.ts';
import type { Delivery } from './deliver.ts';
import { deliveredResponse, dispatchPullRequestBody, dispatchPullRequestTitle, reviewState } from './deliver.ts';
import type { Verdict } from './verdict.ts';

const verdict: Verdict = {
  pass: true,
  criteria: ['the greeting is added', 'a test covers it'],
  gaps: [],
  testResults: '3 passed, 0 failed',
  parsed: true,
};

describe('the pull request of a passed dispatch', () => {
  it('is titled "<identifier>: <issue title>"', () => {
    assert.equal(
      dispatchPullRequestTitle({ identifier: 'ENG-123', title: 'Add a greeting' }),
      'ENG-123: Add a greeting',
    );
  });

  it('has a body with the summary, the criteria, the test results and the Linear link', () => {
    const d = dispatchRecord({
      identifier: 'ENG-123',
      title: 'Add a greeting',
      context: { issueUrl: 'https://linear.app/acme/issue/ENG-123/add-a-greeting' },
    });
    const body = dispatchPullRequestBody(d, verdict, 'Added greeting.txt and a test.');
    assert.match(body, /\*\*Linear:\*\* https:\/\/linear\.app\/acme\/issue\/ENG-123\/add-a-greeting/);
    assert.match(body, /### Summary\n\nAdded greeting\.txt and a test\./);
    assert.match(body, /### Audit criteria\n\n- the greeting is added\n- a test covers it/);
    assert.match(body, /### Test results\n\n3 passed, 0 failed/);
  });

  it('keeps the tail of a long worker report and says when there is none', () => {
    const d = dispatchRecord();
    const long = dispatchPullRequestBody(d, verdict, `${'x'.repeat(5_000)}THE END`);
    assert.match(long, /…x+THE END/);
    assert.ok(long.length < 4_500);
    assert.match(
      dispatchPullRequestBody(d, { ...verdict, criteria: [], testResults: '' }, ''),
      /no summary[\s\S]*none listed[\s\S]*not reported/,
    );
  });
});

describe('reviewState', () => {
  const state = (name: string, type: string) => ({ id: name, name, type });

  it('takes a started state named "In Review", before other review-like names', () => {
    const states = [state('In Progress', 'started'), state('Code review', 'started'), state('In Review', 'started')];
    assert.equal(reviewState(states)?.name, 'In Review');
  });

  it('takes another started review state, and never a state of another type', () => {
    assert.equal(reviewState([state('Code review', 'started')])?.name, 'Code review');
    assert.equal(reviewState([state('In Review', 'completed'), state('In Progress', 'started')]), null);
  });
});

describe('deliveredResponse', () => {
  const pr: Delivery['pr'] = {
    number: 7,
    url: 'https://github.example/acme/app/pull/7',
    repo: 'acme/app',
    branch: 'eng-123',
    base: 'main',
    committed: null,
    outcome: 'opened',
  };

  it('links the PR and names the review state, or says the state was left', () => {
    const d = dispatchRecord();
    assert.match(
      deliveredResponse(d, { pr, reviewState: 'In Review' }, 'SUMMARY'),
      /\[acme\/app#7\]\(https:\/\/github\.example\/acme\/app\/pull\/7\)[\s\S]*\*\*In Review\*\*[\s\S]*SUMMARY$/,
    );
    assert.match(deliveredResponse(d, { pr, reviewState: null }, 'SUMMARY'), /no review state/);
  });
});
