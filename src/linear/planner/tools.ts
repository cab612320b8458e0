// The five planner tools the model uses during an interview turn: create an issue or epic, link two issues, read the
// project as a tree, update an issue, and run the deterministic audit. They are private to the planner, built on the
// same primitive as every other tool (engine/tool.ts). Each call gets its context (the Linear API and the planning
// session) explicitly; nothing is kept in module state.
import { z } from 'zod';
import type { Tool } from '../../engine/tool.ts';
import { defineTool } from '../../engine/tool.ts';
import type { PlanningSession } from '../../store/linear-planning.ts';
import type { LinearApi, LinearIssue, LinearLabel, LinearProject } from '../api/types.ts';
import type { AuditResult } from './audit.ts';
import { auditPlan, epicIds, formatAudit } from './audit.ts';

/** What one planner turn's tools act on. */
export interface PlannerToolContext {
  api: LinearApi;
  session: PlanningSession;
  minDescriptionChars: number;
  /** Issues this planning session may still create. */
  remainingIssues(): number;
  /** Told about every issue a tool created. */
  onCreated(issue: { id: string; identifier: string }): void;
}

const issueRef = z.string().trim().min(1).describe('an issue identifier such as ENG-12 (or its id)');
const priority = z.number().int().min(0).max(4).describe('0 none, 1 urgent, 2 high, 3 medium, 4 low');
const estimate = z.number().min(0).describe('story points');
const labels = z.array(z.string().trim().min(1)).describe('label names of the team');

/** Reads the project with all its issues and the audit of it. */
export async function projectAudit(
  ctx: Pick<PlannerToolContext, 'api' | 'session' | 'minDescriptionChars'>,
): Promise<{ project: LinearProject; audit: AuditResult }> {
  const project = await ctx.api.getProject(ctx.session.projectId);
  return { project, audit: auditPlan(project.issues, { minDescriptionChars: ctx.minDescriptionChars }) };
}

function relationText(issue: LinearIssue): string {
  const by = new Map<string, string[]>();
  for (const r of issue.relations) {
    const kind = r.type === 'blocked_by' ? 'blocked by' : r.type;
    by.set(kind, [...(by.get(kind) ?? []), r.relatedIdentifier]);
  }
  return [...by.entries()].map(([kind, list]) => `${kind} ${list.join(', ')}`).join('; ');
}

function issueNumber(identifier: string): number {
  return Number(/-(\d+)$/.exec(identifier)?.[1] ?? 0);
}

/** A project as an indented tree with relations: what plan_get_project answers and the planner prompts embed. */
export function formatProjectTree(project: LinearProject): string {
  const ids = new Set(project.issues.map((i) => i.id));
  const epics = epicIds(project.issues);
  const children = new Map<string | null, LinearIssue[]>();
  for (const issue of project.issues) {
    const parent = issue.parentId && ids.has(issue.parentId) ? issue.parentId : null;
    children.set(parent, [...(children.get(parent) ?? []), issue]);
  }
  const lines = [`Project "${project.name}" — ${project.issues.length} issue${project.issues.length === 1 ? '' : 's'}`];
  const walk = (parent: string | null, depth: number): void => {
    const list = [...(children.get(parent) ?? [])].sort(
      (a, b) => issueNumber(a.identifier) - issueNumber(b.identifier),
    );
    for (const issue of list) {
      const facts = [
        epics.has(issue.id) ? 'epic' : null,
        `estimate ${issue.estimate ?? '—'}`,
        `priority ${issue.priority}`,
        issue.state ? issue.state.name : null,
        issue.labels.length > 0 ? `labels ${issue.labels.map((l) => l.name).join(', ')}` : null,
        `description ${issue.description.trim().length} chars`,
      ].filter(Boolean);
      const rels = relationText(issue);
      lines.push(
        `${'  '.repeat(depth)}- ${issue.identifier} ${issue.title} (${facts.join(', ')})${rels ? ` — ${rels}` : ''}`,
      );
      if (depth < 20) walk(issue.id, depth + 1);
    }
  };
  walk(null, 0);
  if (project.issues.length === 0) lines.push('(no issues yet)');
  return lines.join('\n');
}

async function resolveLabels(ctx: PlannerToolContext, names: string[], withEpic: boolean): Promise<string[]> {
  const wanted = [...names, ...(withEpic ? ['Epic'] : [])];
  if (wanted.length === 0) return [];
  const known: LinearLabel[] = await ctx.api.teamLabels(ctx.session.teamId);
  const ids: string[] = [];
  const unknown: string[] = [];
  for (const name of wanted) {
    const found = known.find((l) => l.name.toLowerCase() === name.toLowerCase() || l.id === name);
    if (found) ids.push(found.id);
    else if (name === 'Epic') ids.push((await ctx.api.createLabel(ctx.session.teamId, 'Epic')).id);
    else unknown.push(name);
  }
  if (unknown.length > 0) {
    throw new Error(
      `unknown label${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the team has: ${known.map((l) => l.name).join(', ') || 'none'}`,
    );
  }
  return [...new Set(ids)];
}

async function inProject(ctx: PlannerToolContext, ref: string): Promise<LinearIssue> {
  const issue = await ctx.api.getIssue(ref);
  if (issue.project?.id !== ctx.session.projectId)
    throw new Error(`${issue.identifier} is not in the project "${ctx.session.projectName}"`);
  return issue;
}

/** The planner's tools, in the order the model is shown them. */
export const PLANNER_TOOLS: readonly Tool<PlannerToolContext>[] = [
  defineTool({
    name: 'plan_create_issue',
    description:
      'Create an issue (or an epic, isEpic) in the project being planned. With `parent` it becomes a sub-issue. Give every work item a description, an estimate and a priority.',
    input: z.strictObject({
      title: z.string().trim().min(1).max(255),
      description: z.string().describe('what is to be done and how to tell it is done (Markdown)'),
      parent: issueRef.optional().describe('the epic or issue this becomes a sub-issue of'),
      isEpic: z.boolean().optional().describe('an epic groups sub-issues; it is labelled "Epic" and needs no estimate'),
      estimate: estimate.optional(),
      priority: priority.optional(),
      labels: labels.optional(),
    }),
    async run(ctx: PlannerToolContext, input) {
      if (ctx.remainingIssues() <= 0)
        throw new Error('this planning session reached its limit of new issues (linear.planner.maxIssues)');
      const parent = input.parent ? await inProject(ctx, input.parent) : null;
      const labelIds = await resolveLabels(ctx, input.labels ?? [], input.isEpic === true);
      const created = await ctx.api.createIssue({
        teamId: ctx.session.teamId,
        projectId: ctx.session.projectId,
        title: input.title,
        description: input.description,
        ...(parent ? { parentId: parent.id } : {}),
        ...(input.estimate !== undefined ? { estimate: input.estimate } : {}),
        ...(input.priority !== undefined ? { priority: input.priority } : {}),
        ...(labelIds.length > 0 ? { labelIds } : {}),
      });
      ctx.onCreated(created);
      return `Created ${created.identifier} "${input.title}"${input.isEpic ? ' (epic)' : ''}${parent ? ` under ${parent.identifier}` : ''}.`;
    },
  }),
  defineTool({
    name: 'plan_link_issues',
    description: 'Create a relation between two issues of the project: blocks, blocked_by or related.',
    input: z.strictObject({
      from: issueRef,
      to: issueRef,
      type: z
        .enum(['blocks', 'blocked_by', 'related'])
        .describe('"from blocks to", "from is blocked by to", or related'),
    }),
    async run(ctx: PlannerToolContext, input) {
      const from = await inProject(ctx, input.from);
      const to = await inProject(ctx, input.to);
      if (from.id === to.id) throw new Error('an issue cannot be linked to itself');
      if (input.type === 'blocked_by') await ctx.api.createRelation(to.id, from.id, 'blocks');
      else await ctx.api.createRelation(from.id, to.id, input.type);
      const verb = input.type === 'blocked_by' ? 'is blocked by' : input.type === 'blocks' ? 'blocks' : 'is related to';
      return `${from.identifier} ${verb} ${to.identifier}.`;
    },
  }),
  defineTool({
    name: 'plan_get_project',
    description:
      'The project as a tree: every issue with estimate, priority, labels, description size and its relations.',
    input: z.strictObject({}),
    async run(ctx: PlannerToolContext) {
      return formatProjectTree(await ctx.api.getProject(ctx.session.projectId));
    },
  }),
  defineTool({
    name: 'plan_update_issue',
    description: 'Update an issue of the project: title, description, estimate, priority or labels.',
    input: z.strictObject({
      issue: issueRef,
      title: z.string().trim().min(1).max(255).optional(),
      description: z.string().optional(),
      estimate: estimate.nullable().optional(),
      priority: priority.optional(),
      labels: labels.optional().describe('replaces the labels of the issue'),
    }),
    async run(ctx: PlannerToolContext, input) {
      const issue = await inProject(ctx, input.issue);
      const labelIds = input.labels ? await resolveLabels(ctx, input.labels, false) : undefined;
      const patch = {
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.estimate !== undefined ? { estimate: input.estimate } : {}),
        ...(input.priority !== undefined ? { priority: input.priority } : {}),
        ...(labelIds ? { labelIds } : {}),
      };
      if (Object.keys(patch).length === 0)
        throw new Error('nothing to update: give title, description, estimate, priority or labels');
      await ctx.api.updateIssue(issue.id, patch);
      return `Updated ${issue.identifier}: ${Object.keys(patch).join(', ')}.`;
    },
  }),
  defineTool({
    name: 'plan_audit',
    description:
      'Run the completeness audit: descriptions of at least the minimum length, estimates and priorities on every non-epic issue, no cycles in blocking relations, no orphans.',
    input: z.strictObject({}),
    async run(ctx: PlannerToolContext) {
      const { audit } = await projectAudit(ctx);
      return formatAudit(audit);
    },
  }),
];
