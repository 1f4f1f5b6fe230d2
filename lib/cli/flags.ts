import type minimist from 'minimist';
import { CairnError } from '../core/errors.js';

// Reading typed values out of parsed flags, with one clear message per mistake.

type Args = minimist.ParsedArgs;

/** A string flag's value, or null. A repeated flag keeps its last value. */
export function optionalString(args: Args, name: string): string | null {
  let v = args[name];
  if (Array.isArray(v)) v = v[v.length - 1];
  if (v === undefined || v === null || v === '' || typeof v === 'boolean') return null;
  return String(v);
}

export function requiredString(args: Args, name: string): string {
  const v = optionalString(args, name);
  if (v === null) throw new CairnError('usage', `--${name} is required`);
  return v;
}

/** `--labels a,b --labels c` → ['a', 'b', 'c'], trimmed, empty items dropped. */
export function list(args: Args, name: string): string[] {
  const raw = args[name];
  const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v) => typeof v === 'string');
  return [...new Set(values.flatMap((v: string) => v.split(',')).map((v) => v.trim()).filter(Boolean))];
}

export function optionalInt(args: Args, name: string, min = 0): number | undefined {
  const v = optionalString(args, name);
  if (v === null) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new CairnError('usage', `--${name} must be a whole number ≥ ${min}, got '${v}'`);
  return n;
}

export function positional(args: Args, index: number): string | undefined {
  const v = args._[index];
  return v === undefined ? undefined : String(v);
}
