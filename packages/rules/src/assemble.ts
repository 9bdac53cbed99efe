/**
 * Structured conditions to a query and back: what `create_classification_rule` accepts, and how
 * an editor shows a simple query as a list of conditions.
 */
import { err, ok, type Result } from '@calgate/core';
import { RuleError } from './errors.ts';
import { compileValue } from './matchers.ts';
import { MAX_QUERY_LENGTH, parseQuery, type RuleNode } from './parser.ts';
import { PROPERTY_NAMES, type PropertyName, propertyInfo, suggestProperty } from './properties.ts';
import { quoteValue } from './query.ts';

export interface Condition {
  property: PropertyName;
  value: string;
  negated?: boolean;
}

export interface ConditionSet {
  conditions: Condition[];
  /** How the conditions combine; AND when left out. */
  logic?: 'AND' | 'OR';
}

/** The first control character other than tab and line breaks, if any. */
function controlCharacter(value: string): number | undefined {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || (code >= 0x7f && code <= 0x9f)) {
      return code;
    }
  }
  return undefined;
}

function conditionError(condition: unknown, index: number): RuleError | undefined {
  const where = `conditions[${index}]`;
  if (typeof condition !== 'object' || condition === null) {
    return new RuleError('invalid_value', `Invalid ${where}: expected {property, value, negated?}.`, {
      conditionIndex: index,
    });
  }
  const { property, value } = condition as { property?: unknown; value?: unknown };
  const info = typeof property === 'string' ? propertyInfo(property) : undefined;
  if (info === undefined) {
    const suggestion = typeof property === 'string' ? suggestProperty(property) : undefined;
    const hint = suggestion === undefined ? '' : ` Did you mean '${suggestion}'?`;
    return new RuleError(
      'unknown_property',
      `Unknown property '${String(property)}' in ${where}.${hint} Valid properties: ${PROPERTY_NAMES.join(', ')}.`,
      { conditionIndex: index, validProperties: PROPERTY_NAMES, ...(suggestion ? { suggestion } : {}) },
    );
  }
  if (typeof value !== 'string' || value === '') {
    return new RuleError(
      'missing_value',
      `Missing value for '${info.name}' in ${where}: expected a value such as ${info.example}.`,
      { conditionIndex: index },
    );
  }
  const control = controlCharacter(value);
  if (control !== undefined) {
    const hex = control.toString(16).toUpperCase().padStart(4, '0');
    return new RuleError(
      'control_character',
      `Control character U+${hex} in the value of ${where}: values may contain printable characters, spaces, tabs and line breaks only.`,
      { conditionIndex: index },
    );
  }
  const compiled = compileValue(info.name, value);
  if (!compiled.ok) {
    const { reason, suggestion } = compiled.error;
    const hint = suggestion === undefined ? '' : ` Did you mean '${suggestion}'?`;
    return new RuleError(
      'invalid_value',
      `Invalid value '${value.length > 60 ? `${value.slice(0, 60)}…` : value}' for '${info.name}' in ${where}: ${reason}.${hint}`,
      { conditionIndex: index, ...(suggestion ? { suggestion } : {}) },
    );
  }
  return undefined;
}

/**
 * The query for a list of conditions, values quoted where needed: `domain:acme.com -title:"all hands"`
 * for AND, joined by ` OR ` for OR. Each condition is checked as the parser would check it.
 */
export function assembleQuery(input: ConditionSet): Result<string, RuleError> {
  const conditions = input?.conditions;
  if (!Array.isArray(conditions) || conditions.length === 0) {
    return err(new RuleError('no_conditions', 'No conditions: expected at least one {property, value}.'));
  }
  const logic = input.logic ?? 'AND';
  if (logic !== 'AND' && logic !== 'OR') {
    return err(new RuleError('invalid_value', `Invalid logic '${String(logic)}': expected AND or OR.`));
  }
  const parts: string[] = [];
  for (const [index, condition] of conditions.entries()) {
    const problem = conditionError(condition, index);
    if (problem !== undefined) {
      return err(problem);
    }
    const name = (propertyInfo(condition.property) as { name: PropertyName }).name;
    parts.push(`${condition.negated === true ? '-' : ''}${name}:${quoteValue(condition.value)}`);
  }
  const query = parts.join(logic === 'OR' ? ' OR ' : ' ');
  if (query.length > MAX_QUERY_LENGTH) {
    return err(
      new RuleError(
        'query_too_long',
        `The assembled query is too long: ${query.length} characters, at most ${MAX_QUERY_LENGTH} are allowed.`,
        { position: MAX_QUERY_LENGTH },
      ),
    );
  }
  const parsed = parseQuery(query);
  return parsed.ok ? ok(query) : parsed;
}

function asCondition(node: RuleNode): Required<Condition> | undefined {
  if (node.type === 'condition') {
    return { property: node.property, value: node.value, negated: false };
  }
  if (node.type === 'not' && node.operand.type === 'condition') {
    return { property: node.operand.property, value: node.operand.value, negated: true };
  }
  return undefined;
}

/**
 * The conditions of a flat query (one condition, or conditions and negated conditions all joined
 * by AND or all by OR), or null when the query nests groups. The inverse of `assembleQuery`.
 */
export function conditionsOf(
  node: RuleNode,
): { conditions: Required<Condition>[]; logic: 'AND' | 'OR' } | null {
  const single = asCondition(node);
  if (single !== undefined) {
    return { conditions: [single], logic: 'AND' };
  }
  if (node.type !== 'and' && node.type !== 'or') {
    return null;
  }
  const conditions: Required<Condition>[] = [];
  for (const operand of node.operands) {
    const condition = asCondition(operand);
    if (condition === undefined) {
      return null;
    }
    conditions.push(condition);
  }
  return { conditions, logic: node.type === 'and' ? 'AND' : 'OR' };
}
