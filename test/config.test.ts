import { describe, it, expect } from 'vitest';
import { mergeConfig, roleBudget, roleKind, roleWeight, sameKindRoles, DEFAULT_CONFIG } from '../lib/store/config.js';

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
    const c = mergeConfig({ roleWeights: { auditor: 2 } });
    expect(roleWeight(c, 'auditor')).toBe(2);
    expect(roleWeight(c, 'sentinel')).toBe(1.5);
  });

  it('takes per-role budgets beside the per-kind ones, and ignores nonsense values', () => {
    const c = mergeConfig({ budgets: { adversarial: 600, judge: 1000, other: -5 }, tokenizer: { margin: 'x' } });
    expect(roleBudget(c, 'judge')).toBe(1000);
    expect(roleBudget(c, 'auditor')).toBe(600);
    expect(roleBudget(c, 'curator')).toBe(500);
    expect(c.tokenizer.margin).toBe(1);
  });
});
