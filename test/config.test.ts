import { describe, it, expect } from 'vitest';
import { parseConfig, roleBudget, roleKind, roleWeight, sameKindRoles, DEFAULT_CONFIG } from '../lib/store/config.js';

describe('config', () => {
  it('has the spec defaults: roles, budgets and weights', () => {
    expect(roleKind(DEFAULT_CONFIG, 'Sentinel')).toBe('adversarial');
    expect(roleKind(DEFAULT_CONFIG, 'lens')).toBe('validator');
    expect(roleKind(DEFAULT_CONFIG, 'architect')).toBe('other');
    expect(roleBudget(DEFAULT_CONFIG, 'judge')).toBe(800);
    expect(roleBudget(DEFAULT_CONFIG, 'curator')).toBe(500);
    expect(roleWeight(DEFAULT_CONFIG, 'inspector')).toBe(1.5);
    expect(roleWeight(DEFAULT_CONFIG, 'auditor')).toBe(1);
    expect(sameKindRoles(DEFAULT_CONFIG, 'architect')).toEqual(['architect']);
  });

  it('overrides one role weight without dropping the other defaults', () => {
    const c = parseConfig({ roleWeights: { auditor: 2 } }).config;
    expect(roleWeight(c, 'auditor')).toBe(2);
    expect(roleWeight(c, 'sentinel')).toBe(1.5);
  });

  it('takes per-role budgets beside the per-kind ones, and ignores nonsense values', () => {
    const c = parseConfig({ budgets: { adversarial: 600, judge: 1000, other: -5 }, tokenizer: { margin: 'x' } }).config;
    expect(roleBudget(c, 'judge')).toBe(1000);
    expect(roleBudget(c, 'auditor')).toBe(600);
    expect(roleBudget(c, 'curator')).toBe(500);
    expect(c.tokenizer.margin).toBe(1);
  });

  it('one schema: an empty config.json is the defaults; a value of the wrong type is read as the default and named as a problem', () => {
    expect(parseConfig({})).toEqual({ config: DEFAULT_CONFIG, problems: [] });
    const { config, problems } = parseConfig({
      reserve: '3000',
      knowledge: { budget: -1, bdTimeoutMs: 900 },
      roles: 'auditor',
      evidence: { halfLife: 0 },
    });
    expect(config).toMatchObject({
      reserve: 2000,
      knowledge: { budget: 1000, bdTimeoutMs: 900 },
      roles: DEFAULT_CONFIG.roles,
      evidence: { halfLife: 3 },
    });
    expect(problems.map((p) => p.text)).toEqual([
      '"reserve" is not a number ≥ 0',
      '"knowledge.budget" is not a number ≥ 0',
      '"roles" is not an object',
    ]);
    expect(parseConfig(null)).toEqual({
      config: DEFAULT_CONFIG,
      problems: [expect.objectContaining({ text: 'it is not a JSON object' })],
    });
  });
});
