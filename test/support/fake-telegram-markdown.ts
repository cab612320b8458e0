// The MarkdownV2 parser of the fake Telegram Bot API, following the Bot API's documented rules the way Telegram applies
// them: `\` escapes any ASCII character; inside code and pre only ` is special; everywhere else the characters
// _ * [ ] ( ) ~ ` > # + - = | { } . ! either open or close an entity or must be escaped. Errors carry Telegram's wording.

/** A formatting entity of the parsed message (offsets in UTF-16 code units, as the Bot API reports them). */
export interface ParsedEntity {
  type: 'bold' | 'italic' | 'underline' | 'strikethrough' | 'spoiler' | 'code' | 'pre' | 'text_link' | 'custom_emoji';
  offset: number;
  length: number;
  language?: string;
  url?: string;
}

export type ParseResult = { ok: true; text: string; entities: ParsedEntity[] } | { ok: false; error: string };

const RESERVED = '_*[]()~`>#+-=|{}.!';

const NAMES: Record<ParsedEntity['type'], string> = {
  bold: 'Bold',
  italic: 'Italic',
  underline: 'Underline',
  strikethrough: 'Strikethrough',
  spoiler: 'Spoiler',
  code: 'Code',
  pre: 'Pre',
  text_link: 'TextUrl',
  custom_emoji: 'CustomEmoji',
};

interface Open {
  type: ParsedEntity['type'];
  /** Where the entity's text starts in the result. */
  start: number;
  /** Byte offset of the opening marker in the input (Telegram reports UTF-8 byte offsets). */
  byteOffset: number;
  language?: string;
}

function reserved(c: string): ParseResult {
  return { ok: false, error: `Character '${c}' is reserved and must be escaped with the preceding '\\'` };
}

function isEscapable(code: number): boolean {
  return code > 0 && code <= 126;
}

function endsEntity(open: Open, input: string, i: number): boolean {
  const c = input[i];
  switch (open.type) {
    case 'bold':
      return c === '*';
    case 'italic':
      return c === '_' && input[i + 1] !== '_';
    case 'underline':
      return c === '_' && input[i + 1] === '_';
    case 'strikethrough':
      return c === '~';
    case 'spoiler':
      return c === '|' && input[i + 1] === '|';
    case 'code':
      return c === '`';
    case 'pre':
      return c === '`' && input[i + 1] === '`' && input[i + 2] === '`';
    case 'text_link':
    case 'custom_emoji':
      return c === ']';
  }
}

/** Parses MarkdownV2 text; returns the visible text and its entities, or Telegram's error (without the 400 prefix). */
export function parseMarkdownV2(input: string): ParseResult {
  let text = '';
  const entities: ParsedEntity[] = [];
  const stack: Open[] = [];
  const byteOffset = (index: number): number => Buffer.byteLength(input.slice(0, index));
  for (let i = 0; i < input.length; i += 1) {
    const c = input[i] ?? '';
    if (c === '\\' && isEscapable(input.charCodeAt(i + 1))) {
      i += 1;
      text += input[i];
      continue;
    }
    const top = stack[stack.length - 1];
    const special = top && (top.type === 'code' || top.type === 'pre') ? '`' : RESERVED;
    if (!special.includes(c)) {
      text += c;
      continue;
    }
    if (top && endsEntity(top, input, i)) {
      stack.pop();
      const entity: ParsedEntity = { type: top.type, offset: top.start, length: text.length - top.start };
      if (top.type === 'underline' || top.type === 'spoiler') i += 1;
      if (top.type === 'pre') i += 2;
      if (top.language) entity.language = top.language;
      if (top.type === 'text_link' || top.type === 'custom_emoji') {
        let url = '';
        if (input[i + 1] === '(') {
          i += 2;
          const urlStart = i;
          while (i < input.length && input[i] !== ')') {
            if (input[i] === '\\' && isEscapable(input.charCodeAt(i + 1))) {
              url += input[i + 1];
              i += 2;
              continue;
            }
            url += input[i];
            i += 1;
          }
          if (input[i] !== ')')
            return { ok: false, error: `Can't find end of a URL at byte offset ${byteOffset(urlStart)}` };
        } else {
          if (top.type === 'custom_emoji')
            return { ok: false, error: 'Custom emoji entity must contain a tg://emoji URL' };
          url = text.slice(top.start);
        }
        entity.url = url;
      }
      if (entity.length > 0) entities.push(entity);
      continue;
    }
    const start = i;
    let type: ParsedEntity['type'];
    let language: string | undefined;
    switch (c) {
      case '_':
        if (input[i + 1] === '_') {
          type = 'underline';
          i += 1;
        } else type = 'italic';
        break;
      case '*':
        type = 'bold';
        break;
      case '~':
        type = 'strikethrough';
        break;
      case '|':
        if (input[i + 1] !== '|') return reserved(c);
        type = 'spoiler';
        i += 1;
        break;
      case '[':
        type = 'text_link';
        break;
      case '!':
        if (input[i + 1] !== '[') return reserved(c);
        type = 'custom_emoji';
        i += 1;
        break;
      case '>':
        // A block quote marker at the start of a line; its text simply continues.
        if (i === 0 || input[i - 1] === '\n') continue;
        return reserved(c);
      case '`':
        if (input[i + 1] === '`' && input[i + 2] === '`') {
          type = 'pre';
          i += 3;
          let end = i;
          while (end < input.length && !/\s/.test(input[end] ?? '') && input[end] !== '`') end += 1;
          if (end !== i && end < input.length && input[end] !== '`') {
            language = input.slice(i, end);
            i = end;
          }
          if (input[i] === '\n' || input[i] === '\r') {
            const pair = (input[i + 1] === '\n' || input[i + 1] === '\r') && input[i] !== input[i + 1];
            i += pair ? 2 : 1;
          }
          i -= 1;
        } else type = 'code';
        break;
      default:
        return reserved(c);
    }
    stack.push({ type, start: text.length, byteOffset: byteOffset(start), ...(language ? { language } : {}) });
  }
  const open = stack[stack.length - 1];
  if (open)
    return { ok: false, error: `Can't find end of ${NAMES[open.type]} entity at byte offset ${open.byteOffset}` };
  return { ok: true, text, entities };
}
