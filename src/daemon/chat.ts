// The daemon's chat side: the durable outbox with every chat connector registered on it, what chats are told about
// coding sessions and their approvals, and how the connectors start (the web page and Slack's Events API on every node;
// the others as members of the `primary` singleton).
import type { ChatConnectors } from '../channels/chat-connectors.ts';
import { createChatConnectors } from '../channels/chat-connectors.ts';
import type { InboundHandler } from '../channels/connector.ts';
import type { DurableOutbox } from '../channels/outbox.ts';
import { createOutbox } from '../channels/outbox.ts';
import { connectorSingletonName } from '../cluster/primary.ts';
import type { ServiceGroup } from '../cluster/service-group.ts';
import type { SingletonService } from '../cluster/singletons.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { ApprovalNotices } from '../notify/approval-notices.ts';
import type { NotificationRouter } from '../notify/notification-router.ts';
import { createNotificationRouter } from '../notify/notification-router.ts';
import { commandList } from '../operations/commands.ts';
import { OPERATIONS } from '../operations/table.ts';
import type { WriteFence } from '../store/cluster-fence.ts';
import type { OpenedStore } from '../store/open-store.ts';
import type { CodingSessions } from './coding-sessions.ts';
import type { Shutdown } from './shutdown.ts';

/** The outbox and the connectors it sends through. */
export interface Chat {
  outbox: DurableOutbox;
  connectors: ChatConnectors;
}

/**
 * Builds the outbox (its claims fenced by `fence` on PostgreSQL) and the connectors of every enabled channel, each
 * registered with the outbox. Rejects with what a connector's factory throws. Nothing is started.
 */
export async function openChat(deps: {
  config: Config;
  env: NodeJS.ProcessEnv;
  home: string;
  store: Pick<OpenedStore, 'db' | 'dialect'>;
  clock: Clock;
  logger: Logger;
  fence: WriteFence;
}): Promise<Chat> {
  const { config, store, clock, logger } = deps;
  const outbox = createOutbox({
    db: store.db,
    config: config.channels.outbox,
    clock,
    logger: logger.child({ component: 'outbox' }),
    ...(store.dialect === 'postgres' ? { fence: deps.fence } : {}),
  });
  const connectors = await createChatConnectors({
    config,
    env: deps.env,
    home: deps.home,
    db: store.db,
    clock,
    logger,
    commands: commandList(OPERATIONS),
  });
  for (const connector of connectors.all) outbox.register(connector);
  return { outbox, connectors };
}

/** What chats are told: the sessions' notifications and the approvals' requests and decisions. */
export interface ChatNotices {
  notifications: NotificationRouter;
  approvalNotices: ApprovalNotices;
}

/** Builds the NotificationRouter and the approval notices over `chat`'s outbox; they start once sessions are restored. */
export function buildChatNotices(deps: {
  chat: Chat;
  coding: Pick<CodingSessions, 'sessions' | 'approvals'>;
  config: Config;
  clock: Clock;
  logger: Logger;
  shutdown: Shutdown;
}): ChatNotices {
  const { chat, logger, shutdown } = deps;
  const { sessions, approvals } = deps.coding;
  const { outbox, connectors } = chat;
  const notifications = createNotificationRouter({
    sessions,
    outbox,
    clock: deps.clock,
    config: deps.config,
    threads: (channel) => connectors.all.some((c) => c.channel === channel && c.threads === true),
    logger: logger.child({ component: 'notify' }),
  });
  shutdown.add('notifications', () => notifications.stop());
  const approvalNotices = new ApprovalNotices({
    approvals,
    sessions,
    outbox,
    logger: logger.child({ component: 'approval-notices' }),
  });
  shutdown.add('approval-notices', () => approvalNotices.stop());
  return { notifications, approvalNotices };
}

/** A chat connector served as a member of `primary`, under its singleton name. */
export interface ConnectorMember {
  name: string;
  service: SingletonService;
}

/**
 * Starts, in order, the connectors every node runs (the web page and Slack's Events API in http mode, served by every
 * node's gateway) with `inbound`, and returns the others as `primary` members (started where the lease is held). Each
 * connector's stop is registered in order, the ones of the members through `primary`.
 */
export async function startChatConnectors(deps: {
  connectors: ChatConnectors;
  inbound: InboundHandler;
  primary: Pick<ServiceGroup, 'stopMember'>;
  shutdown: Shutdown;
}): Promise<ConnectorMember[]> {
  const { connectors, inbound, primary, shutdown } = deps;
  const { web, slack } = connectors;
  const members: ConnectorMember[] = [];
  for (const connector of connectors.all) {
    if (connector === web || slack.some((account) => account === connector && account.mode === 'http')) {
      shutdown.add('connectors', () => connector.stop());
      await connector.start(inbound);
      continue;
    }
    const name = connectorSingletonName(connector.channel, connector.account);
    shutdown.add('connectors', () => primary.stopMember(name));
    members.push({ name, service: { start: () => connector.start(inbound), stop: () => connector.stop() } });
  }
  return members;
}
