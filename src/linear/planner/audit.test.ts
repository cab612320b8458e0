import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LinearRelation } from '../api/types.ts';
import type { PlanIssue } from './audit.ts';
import { auditPlan, blockingEdges, cycleMembers, formatAudit } from './audit.ts';

const LONG = 'A description long enough to say what is to be done and how to tell it is done.';

function issue(n: number, fields: Partial<PlanIssue> = {}): PlanIssue {
  return {
    id: `id-${n}`,
    identifier: `P-${n}`,
    title: `Issue ${n}`,
    description: LONG,
    estimate: 2,
    priority: 3,
    parentId: null,
    labels: [],
    relations: [],
    ...fields,
  };
}

function rel(type: string, to: number): LinearRelation {
  return { id: `r-${type}-${to}`, type, relatedIssueId: `id-${to}`, relatedIdentifier: `P-${to}` };
}

/** Epic P-1 with P-2 → P-3 → P-4 (P-2 blocks P-3, P-4 blocked_by P-3), all children of the epic. */
function passingGraph(): PlanIssue[] {
  return [
    issue(1, { estimate: null, priority: 0 }),
    issue(2, { parentId: 'id-1', relations: [rel('blocks', 3)] }),
    issue(3, { parentId: 'id-1', relations: [rel('blocked_by', 2)] }),
    issue(4, { parentId: 'id-1', relations: [rel('blocked_by', 3)] }),
  ];
}

const options = { minDescriptionChars: 50 };

describe('auditPlan', () => {
  it('passes a complete DAG: the epic needs no estimate or priority', () => {
    const result = auditPlan(passingGraph(), options);
    assert.equal(result.pass, true, formatAudit(result));
    assert.deepEqual(result.epics, ['P-1']);
    assert.equal(result.checked, 4);
    assert.match(formatAudit(result), /passes the audit \(4 issues, 1 epics\)/);
  });

  it('finds a cycle in blocks / blocked_by (both sides of one relation count once)', () => {
    const issues = passingGraph();
    // P-4 blocks P-2 closes the loop P-2 → P-3 → P-4 → P-2.
    (issues[3] as PlanIssue).relations.push(rel('blocks', 2));
    const result = auditPlan(issues, options);
    assert.equal(result.pass, false);
    const cycle = result.findings.find((f) => f.check === 'cycle');
    assert.ok(cycle, formatAudit(result));
    assert.deepEqual(cycle.issues, ['P-2', 'P-3', 'P-4']);
    assert.deepEqual(
      result.findings.map((f) => f.check),
      ['cycle'],
    );
  });

  it('reports only the issues on the cycle, not those downstream or upstream of it', () => {
    const nodes = ['a', 'b', 'c', 'd', 'e'];
    const edges: [string, string][] = [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'b'],
      ['c', 'd'],
      ['e', 'e'],
    ];
    assert.deepEqual(cycleMembers(nodes, edges), ['b', 'c', 'e']);
    assert.deepEqual(
      cycleMembers(nodes, [
        ['a', 'b'],
        ['b', 'c'],
      ]),
      [],
    );
  });

  it('finds an orphan: no parent, no sub-issues, no relation', () => {
    const issues = [...passingGraph(), issue(5)];
    const result = auditPlan(issues, options);
    assert.deepEqual(
      result.findings.map((f) => [f.check, f.issues]),
      [['orphan', ['P-5']]],
    );
    // Linked by a plain "related" relation it is no orphan any more.
    (issues[4] as PlanIssue).relations.push(rel('related', 2));
    assert.equal(auditPlan(issues, options).pass, true);
  });

  it('finds a short description, a missing estimate and a missing priority', () => {
    const issues = passingGraph();
    issues[1] = { ...(issues[1] as PlanIssue), description: 'Too short.' };
    issues[2] = { ...(issues[2] as PlanIssue), estimate: null };
    issues[3] = { ...(issues[3] as PlanIssue), priority: 0 };
    const result = auditPlan(issues, options);
    assert.deepEqual(
      result.findings.map((f) => [f.check, f.issues]),
      [
        ['description', ['P-2']],
        ['estimate', ['P-3']],
        ['priority', ['P-4']],
      ],
    );
    assert.match(formatAudit(result), /shorter than 50 characters: P-2/);
  });

  it('counts an issue labelled Epic as an epic even without sub-issues yet', () => {
    const issues = [
      issue(1, { estimate: null, priority: 0, labels: [{ id: 'l', name: 'Epic' }], relations: [rel('related', 2)] }),
      issue(2, { relations: [rel('related', 1)] }),
    ];
    assert.equal(auditPlan(issues, options).pass, true);
  });

  it('ignores relations to issues outside the plan when building the graph', () => {
    assert.deepEqual(blockingEdges([issue(1, { relations: [rel('blocks', 99)] })]), []);
  });
});
