// Parsed JSON from outside (hook payloads, reports, settings files) is read through this: a value
// that is not a plain object reads as absent.

export type Json = Record<string, unknown>;

export function asObject(value: unknown): Json | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
}
