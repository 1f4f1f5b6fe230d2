import minimist from 'minimist';
import { CairnError } from '../core/errors.js';
import { extensionsOf, nearest } from '../core/suggest.js';

// A usage mistake is a bug in the caller's pipeline: named precisely, with the nearest flag.

type Args = minimist.ParsedArgs;

export interface FlagSpec {
  string?: string[];
  /** Repeatable, each a comma list. */
  list?: string[];
  boolean?: string[];
  alias?: Record<string, string>;
}

export interface ParsedFlags {
  args: Args;
  /** The first usage mistake (args still parsed, so --strict and --json are known). */
  problem?: string;
}

export function parseFlags(spec: Required<FlagSpec>, argv: string[], operands: boolean): ParsedFlags {
  const known = [...spec.string, ...spec.list, ...spec.boolean];
  const names = new Set([...known, ...Object.keys(spec.alias), ...Object.values(spec.alias)]);
  const unknown: string[] = [];
  const args = minimist(argv, {
    string: [...spec.string, ...spec.list],
    boolean: spec.boolean,
    alias: spec.alias,
    unknown: (flag) => {
      if (flag.startsWith('-') && !names.has(flag.replace(/^--?(no-)?/, '').split('=')[0])) unknown.push(flag.split('=')[0]);
      return true;
    },
  });
  return { args, problem: usageProblem(args, spec, known, unknown, operands) };
}

function usageProblem(args: Args, spec: Required<FlagSpec>, known: string[], unknown: string[], operands: boolean): string | undefined {
  if (unknown.length) {
    const flag = unknown[0];
    const name = flag.replace(/^--?/, '');
    const guesses = [nearest(name, known) ?? extensionsOf(name, known)].flat().filter((g): g is string => g !== undefined);
    return `unknown flag ${flag}${guesses.length ? ` (did you mean ${guesses.map((g) => `--${g}`).join(' or ')}?)` : ''}; see --help`;
  }
  for (const name of spec.string) {
    const v = args[name];
    if (Array.isArray(v)) return `--${name} was given ${v.length} times (${v.map((x) => `'${x}'`).join(', ')}); give it once`;
  }
  if (!operands && args._.length) {
    const word = String(args._[0]);
    // `cairn init claude` meant `--claude`; `notes.md` meant `--file notes.md`
    const flag = nearest(word.replace(/^-+/, ''), known) ?? (/\.\w+$/.test(word) && spec.string.includes('file') ? 'file' : undefined);
    return `unexpected argument '${word}'${flag ? ` (did you mean --${flag}?)` : ''}; see --help`;
  }
  return undefined;
}

export function optionalString(args: Args, name: string): string | null {
  const v = args[name];
  if (v === undefined || v === null || v === '' || typeof v === 'boolean') return null;
  return String(v);
}

export function requiredString(args: Args, name: string): string {
  const v = optionalString(args, name);
  if (v === null) throw new CairnError('usage', `--${name} is required`);
  return v;
}

export function operandText(args: Args): string {
  return args._.map(String).join(' ').trim();
}

export function requiredOperand(args: Args, missing: string): string {
  const text = operandText(args);
  if (!text) throw new CairnError('usage', missing);
  return text;
}

/** `--labels a,b --labels c` → [a, b, c] */
export function list(args: Args, name: string): string[] {
  const raw = args[name];
  const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v) => typeof v === 'string');
  return [
    ...new Set(
      values
        .flatMap((v: string) => v.split(','))
        .map((v) => v.trim())
        .filter(Boolean),
    ),
  ];
}

export function optionalInt(args: Args, name: string, min = 0): number | undefined {
  const v = optionalString(args, name);
  if (v === null) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new CairnError('usage', `--${name} must be a whole number ≥ ${min}, got '${v}'`);
  return n;
}
