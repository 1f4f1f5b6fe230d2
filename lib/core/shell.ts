// A command line split into simple commands as sh would, running nothing; here-documents are data.

export interface SimpleCommand {
  /** Quotes removed; no redirections, leading assignments or reserved words. */
  words: string[];
  heredoc?: string;
}

const RESERVED = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', 'time']);
const WRAPPERS = new Set(['env', 'command', 'exec', 'nohup']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Substitutions' commands after their own; `checkpoint` runs after each (deadlines). */
export function simpleCommands(script: string, checkpoint?: () => void): SimpleCommand[] {
  return new Lexer(script, false, 0, checkpoint).run().commands;
}

interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  command: RawCommand;
}

interface RawCommand {
  words: string[];
  heredoc?: string;
}

class Lexer {
  private i: number;
  private word: string | null = null;
  private command: RawCommand = { words: [] };
  private readonly done: RawCommand[] = [];
  private readonly nestedCommands: RawCommand[] = [];
  private pending: PendingHeredoc[] = [];
  private nextWordRole: 'word' | 'target' | 'heredoc' | 'heredoc-strip' = 'word';
  private depth = 0;

  constructor(
    private readonly src: string,
    /** Inside `$( )`: stop at the unmatched `)`. */
    private readonly nested: boolean,
    start = 0,
    private readonly checkpoint?: () => void,
  ) {
    this.i = start;
  }

  run(): { commands: SimpleCommand[]; end: number } {
    const src = this.src;
    while (this.i < src.length) {
      const c = src[this.i];
      if (c === '\n') {
        this.endCommand();
        this.i++;
        this.readHeredocs();
      } else if (c === ' ' || c === '\t' || c === '\r') {
        this.endWord();
        this.i++;
      } else if (c === '#' && this.word === null) {
        while (this.i < src.length && src[this.i] !== '\n') this.i++;
      } else if (c === '\\') {
        if (src[this.i + 1] === '\n')
          this.i += 2; // line continuation
        else {
          this.append(src[this.i + 1] ?? '');
          this.i += 2;
        }
      } else if (c === "'") {
        const close = src.indexOf("'", this.i + 1);
        const end = close < 0 ? src.length : close;
        this.append(src.slice(this.i + 1, end));
        this.i = end + 1;
      } else if (c === '"') {
        this.doubleQuoted();
      } else if (c === '$' && src[this.i + 1] === "'") {
        this.ansiC();
      } else if (c === '$' && src[this.i + 1] === '(' && src[this.i + 2] !== '(') {
        this.append(this.substitution(this.i + 2));
      } else if (c === '`') {
        this.append(this.backticks());
      } else if (c === ')' && this.nested && this.depth === 0) {
        this.endCommand();
        return { commands: this.result(), end: this.i + 1 };
      } else if (this.operator()) {
        // handled
      } else {
        this.append(c);
        this.i++;
      }
    }
    this.endCommand();
    return { commands: this.result(), end: src.length };
  }

  private result(): SimpleCommand[] {
    const out: SimpleCommand[] = [];
    for (const raw of [...this.done, ...this.nestedCommands]) {
      const words = commandWords(raw.words);
      if (words.length) out.push(raw.heredoc === undefined ? { words } : { words, heredoc: raw.heredoc });
    }
    return out;
  }

  private append(text: string): void {
    this.word = (this.word ?? '') + text;
  }

  private endWord(): void {
    if (this.word === null) return;
    const word = this.word;
    this.word = null;
    const role = this.nextWordRole;
    this.nextWordRole = 'word';
    if (role === 'word') this.command.words.push(word);
    else if (role === 'heredoc' || role === 'heredoc-strip') {
      this.pending.push({ delimiter: word, stripTabs: role === 'heredoc-strip', command: this.command });
    }
  }

  private endCommand(): void {
    this.endWord();
    this.nextWordRole = 'word';
    if (this.command.words.length || this.command.heredoc !== undefined) this.done.push(this.command);
    this.command = { words: [] };
    this.checkpoint?.();
  }

  private operator(): boolean {
    const src = this.src;
    const c = src[this.i];
    const two = src.slice(this.i, this.i + 2);
    const three = src.slice(this.i, this.i + 3);
    if (c === '(') {
      this.endCommand();
      this.depth++;
      this.i++;
      return true;
    }
    if (c === ')') {
      this.endCommand();
      this.depth = Math.max(0, this.depth - 1);
      this.i++;
      return true;
    }
    if (three === '&>>' || two === '&>') {
      this.endWord();
      this.i += three === '&>>' ? 3 : 2;
      this.nextWordRole = 'target';
      return true;
    }
    if (two === '&&' || two === '||' || two === ';;' || two === '|&') {
      this.endCommand();
      this.i += 2;
      return true;
    }
    if (c === ';' || c === '&' || c === '|') {
      this.endCommand();
      this.i++;
      return true;
    }
    if (c === '<' || c === '>') {
      // digits right before the operator are its file descriptor (`2>&1`)
      if (this.word !== null && /^\d+$/.test(this.word)) this.word = null;
      else this.endWord();
      if (three === '<<<') {
        this.i += 3;
        this.nextWordRole = 'target';
      } else if (three === '<<-') {
        this.i += 3;
        this.nextWordRole = 'heredoc-strip';
      } else if (two === '<<') {
        this.i += 2;
        this.nextWordRole = 'heredoc';
      } else {
        this.i += ['>>', '>&', '<&', '>|', '<>'].includes(two) ? 2 : 1;
        this.nextWordRole = 'target';
      }
      return true;
    }
    return false;
  }

  /** The bodies of the here-documents announced on the line just ended. */
  private readHeredocs(): void {
    const src = this.src;
    for (const doc of this.pending) {
      const lines: string[] = [];
      for (;;) {
        if (this.i >= src.length) break;
        const nl = src.indexOf('\n', this.i);
        const lineEnd = nl < 0 ? src.length : nl;
        let line = src.slice(this.i, lineEnd);
        if (doc.stripTabs) line = line.replace(/^\t+/, '');
        if (line === doc.delimiter) {
          this.i = nl < 0 ? src.length : nl + 1;
          break;
        }
        // `EOF)` closing a `$(cat <<EOF …` on the delimiter's line
        if (this.nested && line.startsWith(doc.delimiter) && line.slice(doc.delimiter.length).trimStart().startsWith(')')) {
          this.i += src.slice(this.i).indexOf(doc.delimiter) + doc.delimiter.length;
          break;
        }
        lines.push(line);
        this.i = nl < 0 ? src.length : nl + 1;
      }
      doc.command.heredoc = lines.length ? lines.join('\n') + '\n' : '';
    }
    this.pending = [];
  }

  private doubleQuoted(): void {
    const src = this.src;
    let text = '';
    this.i++;
    while (this.i < src.length && src[this.i] !== '"') {
      const c = src[this.i];
      if (c === '\\') {
        const next = src[this.i + 1];
        if (next === '\n') this.i += 2;
        else if (next === '$' || next === '`' || next === '"' || next === '\\') {
          text += next;
          this.i += 2;
        } else {
          text += c;
          this.i++;
        }
      } else if (c === '$' && src[this.i + 1] === '(' && src[this.i + 2] !== '(') {
        text += this.substitution(this.i + 2);
      } else if (c === '`') {
        text += this.backticks();
      } else {
        text += c;
        this.i++;
      }
    }
    this.i++;
    this.append(text);
  }

  private ansiC(): void {
    const src = this.src;
    const escapes: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      '\\': '\\',
      "'": "'",
      '"': '"',
      a: '\x07',
      b: '\b',
      e: '\x1b',
      E: '\x1b',
      f: '\f',
      v: '\v',
    };
    let text = '';
    this.i += 2;
    while (this.i < src.length && src[this.i] !== "'") {
      const c = src[this.i];
      if (c !== '\\') {
        text += c;
        this.i++;
        continue;
      }
      const next = src[this.i + 1] ?? '';
      const hex = /^(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8}))/.exec(src.slice(this.i + 1));
      if (hex) {
        const code = parseInt(hex[1] ?? hex[2] ?? hex[3], 16);
        text += code <= 0x10ffff ? String.fromCodePoint(code) : '';
        this.i += 1 + hex[0].length;
      } else {
        text += escapes[next] ?? '\\' + next;
        this.i += 2;
      }
    }
    this.i++;
    this.append(text);
  }

  /** Its commands kept; its value a `cat <<EOF` body, else the text. */
  private substitution(start: number): string {
    const inner = new Lexer(this.src, true, start, this.checkpoint).run();
    const written = this.src.slice(start - 2, inner.end);
    this.i = inner.end;
    return this.valueOf(inner.commands, written);
  }

  private backticks(): string {
    const src = this.src;
    let j = this.i + 1;
    while (j < src.length && src[j] !== '`') j += src[j] === '\\' ? 2 : 1;
    const written = src.slice(this.i, j + 1);
    const inner = new Lexer(src.slice(this.i + 1, j).replace(/\\([`$\\])/g, '$1'), false, 0, this.checkpoint).run();
    this.i = j + 1;
    return this.valueOf(inner.commands, written);
  }

  private valueOf(inner: SimpleCommand[], written: string): string {
    this.nestedCommands.push(...inner);
    const only = inner.length === 1 ? inner[0] : undefined;
    if (only && only.heredoc !== undefined && only.words.length === 1 && only.words[0] === 'cat') {
      return only.heredoc.replace(/\n+$/, ''); // command substitution drops trailing newlines
    }
    return written;
  }
}

function commandWords(words: string[]): string[] {
  let k = 0;
  while (k < words.length && (ASSIGNMENT.test(words[k]) || RESERVED.has(words[k]) || WRAPPERS.has(words[k]))) k++;
  return words.slice(k);
}
