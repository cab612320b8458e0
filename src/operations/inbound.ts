// What chat connectors call for every inbound message: a chat command of the operations table is answered at once
// through the Outbox, with no model involved (so commands work without any inference provider); anything else is
// accepted durably into the person's engine session, whose turn answers later.
import type { InboundHandler, Outbox } from '../channels/connector.ts';
import { formatTarget } from '../channels/connector.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { EngineApi } from '../engine/api.ts';
import type { InboundCommandStore } from '../store/inbound-commands.ts';
import { commandOperation, runCommandReply } from './commands.ts';
import type { Operation, OperationServices } from './operation.ts';

export interface InboundDeps {
  ops: readonly Operation[];
  services: OperationServices;
  engine: EngineApi;
  outbox: Outbox;
  logger: Logger;
  /** Remembers the commands run, so one redelivered after a crash is not run twice; without it commands run per delivery. */
  commands?: InboundCommandStore;
  /** Time source for the command records (default the services' clock). */
  now?: () => number;
}

/** What the user is told when a command was cut off by a crash and then delivered again. */
export function interruptedCommandText(text: string): string {
  const shown = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  return `⚠️ The daemon restarted while it was running "${shown}"; it may or may not have taken effect, so it was not run again. Check with /claude_sessions before you send it once more.`;
}

/**
 * Builds the connectors' inbound handler. It resolves once the message is handled: a command answered (the reply is
 * in the Outbox), a message on disk in the engine's inbox, or an empty message logged and ignored. It rejects when the
 * engine could not accept the message, so the connector does not acknowledge it and it is delivered again.
 */
export function createInboundHandler(deps: InboundDeps): InboundHandler {
  const { ops, services, engine, outbox, logger, commands } = deps;
  const now = deps.now ?? (() => services.clock.now());
  return async (message) => {
    const channel = formatTarget(message.target);
    if (commandOperation(ops, message.text)) {
      const state = (await commands?.begin(channel, message.id, message.text, now())) ?? 'new';
      if (state === 'done') {
        logger.info(
          { channel, messageId: message.id },
          'chat command delivered again; it already ran and was answered',
        );
        return;
      }
      // One answer per command: the reply and the "cut off" notice share a key, so a notice after a crash that came
      // between the reply and `finish` is not queued (the command ran and its reply is on its way).
      const key = { key: `command-${channel}-${message.id}` };
      if (state === 'running') {
        logger.warn(
          { channel, messageId: message.id },
          'chat command delivered again after a crash cut it off; not run twice',
        );
        await outbox.send(message.target, { text: interruptedCommandText(message.text), replyTo: message.id }, key);
      } else {
        const caller = { kind: 'chat' as const, channel, userId: message.userId };
        const reply = await runCommandReply(ops, message.text, caller, services);
        if (reply !== null) await outbox.send(message.target, { ...reply, replyTo: message.id }, key);
      }
      faultPoint('inbound.command.before-finish');
      await commands?.finish(channel, message.id, now());
      return;
    }
    if (!message.text.trim()) {
      logger.info({ channel, messageId: message.id }, 'inbound message without text ignored');
      return;
    }
    const accepted = await engine.acceptUserMessage(message);
    if (accepted.duplicate)
      logger.info(
        { channel, messageId: message.id, session: accepted.sessionId },
        'inbound message delivered again; already accepted',
      );
  };
}
