import { asObject, type Json } from '../core/json.js';

// A payload's shape is promised by nobody: wrong types read as absent.

export const NO_CALL = { transcriptPath: null, toolUseId: null };

export function str(obj: Json | null, key: string): string | null {
  const v = obj?.[key];
  return typeof v === 'string' && v !== '' ? v : null;
}

export function firstStr(obj: Json | null, ...keys: string[]): string | null {
  for (const key of keys) {
    const v = str(obj, key);
    if (v !== null) return v;
  }
  return null;
}

/** A number or numeric string other than 0. */
export function failedExitCode(value: unknown): boolean {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n !== 0;
}

/** A string, or argv (`["bash", "-lc", script]` is the script). */
export function shellCommand(toolInput: unknown): string | null {
  const input = asObject(toolInput);
  const raw = input?.command ?? input?.cmd;
  if (typeof raw === 'string') return raw === '' ? null : raw;
  if (Array.isArray(raw) && raw.every((a) => typeof a === 'string')) {
    const argv = raw as string[];
    const flag = argv.findIndex((a, i) => i > 0 && /^-\w*c$/.test(a));
    const script = flag > 0 && flag === argv.length - 2 ? argv[argv.length - 1] : argv.join(' ');
    return script === '' ? null : script;
  }
  return null;
}
