// Signal has no buttons: a message's buttons are shown as a numbered list under its text (`1 Allow · 2 Allow for
// session · 3 Always · 4 Deny`), and the conversation remembers the commands of the last message that had one, so a
// reply of just a number (`1`) stands for that button's command. What is remembered is kept by SignalState (a small
// file), so it survives a restart when the connector has a state directory.
import type { ChatButton } from '../connector.ts';

/** The commands of the last numbered list shown in each conversation (chat id → commands, 1-based in the list). */
export type MenuMap = Record<string, string[]>;

/** The text with the buttons as one numbered list (one line per row, `·` between buttons); the commands in order. */
export function renderMenu(text: string, buttons: ChatButton[][] | undefined): { text: string; commands: string[] } {
  const rows = (buttons ?? []).filter((row) => row.length > 0);
  if (rows.length === 0) return { text, commands: [] };
  const commands: string[] = [];
  const lines = rows.map((row) =>
    row
      .map((button) => {
        commands.push(button.command);
        return `${commands.length} ${button.label}`;
      })
      .join(' · '),
  );
  return { text: `${text}\n\n${lines.join('\n')}`, commands };
}

/**
 * The command a reply stands for when it is just a number of the conversation's last list (`1`, ` 2 `); undefined
 * for any other text or a number outside the list.
 */
export function menuCommand(menus: MenuMap, chat: string, text: string): string | undefined {
  const match = /^\s*(\d{1,2})\s*$/.exec(text);
  if (!match) return undefined;
  return menus[chat]?.[Number(match[1]) - 1];
}
