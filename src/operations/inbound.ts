// What chat connectors call for every inbound message: a chat command of the operations table is answered at once
// through the Outbox, with no model involved (so commands work without any inference provider); anything else is
// accepted durably into the person's engine session, whose turn answers later.
import type { InboundHandler, Outbox } from '../channels/connector.ts';
import { formatTarget } from '../channels/connector.ts';
import type { Logger } from '../core/logger.ts';
import type { EngineApi } from '../engine/api.ts';
import { runCommand } from './commands.ts';
import type { Operation, OperationServices } from './operation.ts';

export interface InboundDeps {
  ops: readonly Operation[];
  services: OperationServices;
  engine: EngineApi;
  outbox: Outbox;
  logger: Logger;
}

/**
 * Builds the connectors' inbound handler. It resolves once the message is handled: a command answered (the reply is
 * in the Outbox), a message on disk in the engine's inbox, or an empty message logged and ignored. It rejects when the
 * engine could not accept the message, so the connector does not acknowledge it and it is delivered again.
 */
export function createInboundHandler(deps: InboundDeps): InboundHandler {
  const { ops, services, engine, outbox, logger } = deps;
  return async (message) => {
    const channel = formatTarget(message.target);
    const reply = await runCommand(ops, message.text, { kind: 'chat', channel, userId: message.userId }, services);
    if (reply !== null) {
      outbox.send(message.target, { text: reply, replyTo: message.id });
      return;
    }
    if (!message.text.trim()) {
      logger.info({ channel, messageId: message.id }, 'inbound message without text ignored');
      return;
    }
    const accepted = await engine.acceptUserMessage(message);
    if (accepted.duplicate) logger.info({ channel, messageId: message.id, session: accepted.sessionId }, 'inbound message delivered again; already accepted');
  };
}
