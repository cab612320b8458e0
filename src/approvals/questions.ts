// Questions with choices (Claude Code's AskUserQuestion): read from the tool's untrusted input, answered by option label
// or number, and handed back to the agent as the tool's input with `answers` filled in.
import { z } from 'zod';
import { ASK_USER_QUESTION } from '../coding/claude/claude-messages.ts';
import { invalidInput } from '../core/errors.ts';
import type { ApprovalQuestion } from './approval.ts';

const questionsInput = z.looseObject({
  questions: z
    .array(
      z.looseObject({
        question: z.string().min(1),
        header: z.string().optional(),
        options: z.array(z.looseObject({ label: z.string().min(1) })).max(20),
        multiSelect: z.boolean().optional(),
      }),
    )
    .min(1)
    .max(10),
});

/** The questions of a question tool call, or null when `tool` is not a question tool or its input has no choices. */
export function questionsOf(tool: string, input: unknown): ApprovalQuestion[] | null {
  if (tool !== ASK_USER_QUESTION) return null;
  const parsed = questionsInput.safeParse(input);
  if (!parsed.success) return null;
  return parsed.data.questions.map((q) => ({
    question: q.question,
    ...(q.header ? { header: q.header } : {}),
    options: q.options.map((o) => o.label),
    multiSelect: q.multiSelect ?? false,
  }));
}

/**
 * Resolves one answer per question (an option's label, case-insensitive, or its 1-based number; several separated by
 * commas for a multi-select question) to the labels the agent gets, keyed by question text. Throws invalid_input
 * naming `answers` when an answer is missing or names no option.
 */
export function resolveAnswers(
  questions: readonly ApprovalQuestion[],
  answers: readonly string[],
): Record<string, string> {
  if (answers.length !== questions.length) {
    throw invalidInput(
      `answers: give one answer per question (${questions.length} asked, ${answers.length} given)`,
      'answers',
    );
  }
  const out: Record<string, string> = {};
  questions.forEach((q, index) => {
    const given = (answers[index] ?? '').trim();
    const parts = q.multiSelect ? given.split(',').map((p) => p.trim()) : [given];
    const labels = parts.map((part) => {
      const byNumber = /^\d+$/.test(part) ? q.options[Number(part) - 1] : undefined;
      const byLabel = q.options.find((o) => o.toLowerCase() === part.toLowerCase());
      const label = byNumber ?? byLabel;
      if (!label) {
        throw invalidInput(
          `answers: "${part}" is not an option of "${q.question}" (${q.options.map((o, i) => `${i + 1} ${o}`).join(', ')})`,
          'answers',
        );
      }
      return label;
    });
    out[q.question] = labels.join(', ');
  });
  return out;
}

/** The question tool's input with the answers added (what Claude Code reads back as the user's choice). */
export function answeredInput(input: unknown, answers: Record<string, string>): Record<string, unknown> {
  const base = typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
  return { ...(base as Record<string, unknown>), answers };
}

/** The answers as one line a person (and the session log) reads: `Which file? → a.ts`. */
export function answersText(answers: Record<string, string>): string {
  return Object.entries(answers)
    .map(([question, answer]) => `${question} → ${answer}`)
    .join('; ');
}
