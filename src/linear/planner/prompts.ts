// Texts of the project planner: the model's system prompt for an interview turn, and the fixed messages (welcome,
// approval, audit findings, abandon) posted without a model. `{{var}}` templates as in the pipeline's prompts.
import { renderTemplate } from '../pipeline/prompts.ts';

export const PLANNER_PROMPTS = {
  system:
    'You are a project planner working with a person in Linear, building the issue hierarchy of the project "{{projectName}}" ' +
    '(planning started on {{rootIdentifier}}). This is interview turn {{turnCount}}.\n\n' +
    'Each turn: read what the person said, turn it into issues with your tools (plan_create_issue, plan_update_issue, ' +
    'plan_link_issues), check the project with plan_get_project when you need to, then answer briefly: what you created or ' +
    'changed (identifiers), and ONE next question that moves the plan forward.\n\n' +
    'A good plan: epics (isEpic) for the feature areas, each work item a sub-issue of an epic with a description of at least ' +
    '{{minDescriptionChars}} characters (what to do, how to tell it is done), an estimate and a priority (1 urgent … 4 low); ' +
    'blocking relations where order matters, with no cycles; no issue without a parent or a relation. Do not create ' +
    'duplicates of issues that already exist. You can run plan_audit to see what is still missing. The person says ' +
    '"finalize plan" to have the plan audited and approved.\n\n' +
    '## The project now\n{{planSnapshot}}\n\n## Open findings of the last audit\n{{auditFindings}}',
  welcome:
    'Planning mode is on for the project **{{projectName}}**. Each comment on {{rootIdentifier}} is one step of the interview: ' +
    'I turn your answers into epics, sub-issues and dependencies. While the plan is open, issues of this project are not ' +
    'dispatched to coding agents.\n\n```\n{{planSnapshot}}\n```\n\n' +
    'What are the main feature areas of this project, and what does "done" look like for it?\n\n' +
    'Say **finalize plan** when the plan is complete (it is audited first), or **abandon planning** to leave planning mode.',
  already:
    'The project **{{projectName}}** is already being planned on {{rootIdentifier}} ({{status}}). Continue there, or say **abandon planning** there first.',
  approved:
    'Plan approved: it passes the audit ({{issueCount}} issues). Planning mode is off; issues of **{{projectName}}** can be dispatched again.\n\n```\n{{planSnapshot}}\n```',
  auditFailed:
    'The plan is not complete yet, so it stays in planning mode. The audit found:\n\n{{auditFindings}}\n\n' +
    'Tell me how to fill these gaps (or fix them in Linear), then say **finalize plan** again.',
  abandoned: 'Planning of **{{projectName}}** abandoned. Planning mode is off; its issues can be dispatched again.',
  notInterviewing: 'The planning session of **{{projectName}}** is {{status}}; nothing was changed.',
  noProject:
    '{{identifier}} is not in a project. Ask me to plan this project on an issue that belongs to the project to plan.',
  noInference: 'I cannot run a planning turn: no inference provider is configured (inference.providers).',
  failed: 'This planning turn failed: {{error}}. Your message was not lost; send it again to retry.',
} as const;

export type PlannerText = keyof typeof PLANNER_PROMPTS;

/** Renders one planner text with its variables. */
export function plannerText(name: PlannerText, vars: Readonly<Record<string, string>>): string {
  return renderTemplate(PLANNER_PROMPTS[name], vars);
}

/** What a message on the planning issue asks for. */
export type PlannerCommand = 'start' | 'finalize' | 'abandon' | 'message';

/** Strips @handles so that "@switchboard finalize plan" reads as "finalize plan". */
function bare(text: string): string {
  return text
    .replace(/(^|\s)@[A-Za-z0-9][\w.-]*/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Classifies a message: start (plan this project), finalize (finalize plan), abandon (abandon / cancel planning), or a message. */
export function plannerCommand(text: string): PlannerCommand {
  const t = bare(text).toLowerCase();
  if (/^(abandon|cancel)[.!]?$/.test(t) || /\b(abandon|cancel|stop)\s+(the\s+)?(planning|plan)\b/.test(t))
    return 'abandon';
  if (/\bfinali[sz]e\s+(the\s+)?plan\b/.test(t)) return 'finalize';
  if (/\bplan\s+(this|the)\s+project\b/.test(t)) return 'start';
  return 'message';
}
