// The orchestrator the connector e2e tests script: asked to "fix the flaky test", it launches one single-turn coding
// session `flaky-fix` (the fake Claude CLI asking for its tool, then asking a question) in `workdir`, and says so.
import type { ChatBody, ChatReply } from './mock-openai-chat.ts';
import { chatText, chatToolCall, lastUserText, messageText, pendingToolResults } from './mock-openai-chat.ts';

/** The mock model's handler: `launched` is what it says once the launch succeeded; anything else gets "Noted." */
export function flakyFixOrchestrator(workdir: string, launched: string): (body: ChatBody) => ChatReply {
  return (body) => {
    const results = pendingToolResults(body).map(messageText).join('\n');
    const last = lastUserText(body);
    if (results.includes('Launched (claude)')) return chatText(launched);
    if (results) return chatText(`Unexpected tool result: ${results}`);
    if (last.includes('fix the flaky test')) {
      return chatToolCall('claude_launch', {
        prompt: `[[tool]] [[question]] Fix the flaky test in ${workdir}`,
        name: 'flaky-fix',
        workdir,
        multiTurnDisabled: true,
      });
    }
    return chatText('Noted.');
  };
}
