import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VERDICT_INSTRUCTION } from './prompts.ts';
import { parseVerdict, UNNAMED_GAP, UNPARSABLE_GAP } from './verdict.ts';

describe('parseVerdict', () => {
  it('reads a plain verdict line', () => {
    const v = parseVerdict(
      'All good.\n{"pass": true, "criteria": ["a"], "gaps": [], "testResults": "14 passed, 0 failed"}',
    );
    assert.deepEqual(v, { pass: true, criteria: ['a'], gaps: [], testResults: '14 passed, 0 failed', parsed: true });
  });

  it('tolerates code fences and nested objects, and does not take a nested object for the verdict', () => {
    const reply =
      'Report:\n```json\n{\n  "pass": false,\n  "criteria": ["x"],\n  "gaps": ["no tests"],\n  "testResults": {"passed": 2, "failed": 1},\n  "meta": {"pass": true, "deep": {"a": [1, {"b": "}"}]}}\n}\n```\nThanks.';
    const v = parseVerdict(reply);
    assert.equal(v.pass, false);
    assert.deepEqual(v.gaps, ['no tests']);
    assert.equal(v.testResults, '{"passed":2,"failed":1}');
    assert.equal(v.parsed, true);
  });

  it('takes the last verdict when there are several', () => {
    const v = parseVerdict(
      'first {"pass": false, "gaps": ["a"]} then after fixing: {"pass": true, "criteria": [], "gaps": []}',
    );
    assert.equal(v.pass, true);
  });

  it('skips braces in prose, objects without a boolean pass, and strings holding braces', () => {
    const v = parseVerdict(
      'I used {curly} text, {"pass": "yes"}, and {"note": "a } b"} then {"pass": false, "gaps": ["the { edge"]}',
    );
    assert.equal(v.pass, false);
    assert.deepEqual(v.gaps, ['the { edge']);
  });

  it('counts an unparsable reply as a fail with a gap saying so', () => {
    for (const reply of ['', 'Looks fine to me!', '{"pass": true', '{"pass": tru}']) {
      const v = parseVerdict(reply);
      assert.equal(v.pass, false, reply);
      assert.equal(v.parsed, false);
      assert.deepEqual(v.gaps, [UNPARSABLE_GAP]);
    }
  });

  it('does not take the instruction shape (echoed prompt) for a verdict', () => {
    assert.equal(parseVerdict(`You said: ${VERDICT_INSTRUCTION}`).parsed, false);
  });

  it('normalizes fields: a string gap becomes a list, a failing verdict without gaps gets one', () => {
    assert.deepEqual(parseVerdict('{"pass": false, "gaps": "missing docs"}').gaps, ['missing docs']);
    assert.deepEqual(parseVerdict('{"pass": false}').gaps, [UNNAMED_GAP]);
    assert.deepEqual(parseVerdict('{"pass": true}'), {
      pass: true,
      criteria: [],
      gaps: [],
      testResults: '',
      parsed: true,
    });
  });
});
