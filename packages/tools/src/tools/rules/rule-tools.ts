import { CalgateError } from '@calgate/core';
import { assembleQuery, type CompiledQuery, compileQuery, PROPERTY_NAMES } from '@calgate/rules';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import {
  compiled,
  OPERATORS,
  projectIdOf,
  projectNames,
  READS,
  ruleOut,
  rulesOf,
  SYNTAX_POINTER,
} from './common.ts';
import { CHECK_DAYS, rulePreview, ruleWarnings, tryRule, warnedText } from './preview-rule.ts';

/** Saving reads calendars to try the query, and they may live at Google. */
const WRITES = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
} as const;

const rule = z.object({
  id: z.string(),
  projectId: z.string(),
  project: z.string().describe("The project's name."),
  query: z.string(),
  weight: z.number(),
  enabled: z.boolean(),
});

const projectId = z.string().min(1).max(64).describe('From list_projects.');
/** What create_rule, create_classification_rule and update_rule say of the query saved. */
const TRIED = `The answer's preview counts matches ${CHECK_DAYS} days either side of now; warnings says when there are none.`;
const weight = z
  .number()
  .int()
  .min(1)
  .max(1000)
  .optional()
  .describe('Its vote when rules disagree; default 1.');

export const createRule = defineTool({
  name: 'create_rule',
  toolset: 'rules',
  title: 'Create a rule',
  description: `Saves a rule filing matching events into a project (test it with preview_rule first). Gmail-style query, e.g. domain:acme.com; title:stand*; title:"team sync" -response:declined; (domain:a.com OR domain:b.com) day-of-week:mon,wed; time-of-day:>17:00 is-all-day:no; attendees:pat; calendar:work recurring:yes; has-attendees:no -transparency:transparent; "board meeting"; -title:lunch. ${OPERATORS} ${TRIED} ${SYNTAX_POINTER}`,
  access: 'write',
  annotations: WRITES,
  input: z.strictObject({ query: z.string().min(1).max(100_000), projectId, weight }),
  output: z.object({ rule, preview: rulePreview, warnings: ruleWarnings }),
  exampleIntent:
    'Save a rule with the query domain:acme.com that files those meetings into the Acme project.',
  example: {
    query: 'title:"quarterly review" OR domain:example.com',
    projectId: 'prj_01JQ8ZC4AV2M7RKXW9TB3NDEHF',
  },
  exampleResult: {
    rule: { project: 'Acme', query: 'title:"quarterly review" OR domain:example.com', weight: 1 },
  },
  async run(args, context) {
    const query = compiled(args.query);
    const rules = rulesOf(context);
    await projectIdOf(rules, args.projectId);
    const tried = await tryRule(query, context);
    const saved = await rules.createRule(args);
    return { rule: ruleOut(saved, await projectNames(rules)), ...tried };
  },
  text: warnedText,
});

export const createClassificationRule = defineTool({
  name: 'create_classification_rule',
  toolset: 'rules',
  title: 'Create a rule from conditions',
  description: `Saves a rule built from conditions (quoted as needed) and returns its query. ${TRIED}`,
  access: 'write',
  annotations: WRITES,
  input: z.strictObject({
    projectId,
    conditions: z
      .array(
        z.strictObject({
          property: z.enum(PROPERTY_NAMES),
          value: z.string().min(1).max(2000),
          negated: z.boolean().optional(),
        }),
      )
      .min(1)
      .max(50),
    logic: z.enum(['AND', 'OR']).default('AND'),
    weight,
  }),
  output: z.object({ query: z.string(), rule, preview: rulePreview, warnings: ruleWarnings }),
  exampleIntent: 'Make a rule from a list of conditions rather than writing the query myself.',
  example: {
    projectId: 'prj_01JQ8ZC4AV2M7RKXW9TB3NDEHF',
    conditions: [
      { property: 'domain', value: 'example.com' },
      { property: 'response', value: 'declined', negated: true },
    ],
    logic: 'AND',
  },
  exampleResult: { query: 'domain:example.com -response:declined', rule: { project: 'Acme' } },
  async run(args, context) {
    const assembled = assembleQuery({ conditions: args.conditions, logic: args.logic });
    if (!assembled.ok) {
      throw assembled.error;
    }
    const query = compiled(assembled.value);
    const rules = rulesOf(context);
    await projectIdOf(rules, args.projectId);
    const tried = await tryRule(query, context);
    const saved = await rules.createRule({
      query: assembled.value,
      projectId: args.projectId,
      weight: args.weight,
    });
    return { query: saved.query, rule: ruleOut(saved, await projectNames(rules)), ...tried };
  },
  text: warnedText,
});

export const updateRule = defineTool({
  name: 'update_rule',
  toolset: 'rules',
  title: 'Update a rule',
  description: `Changes a rule's query, project, weight or enabled; what it filed changes at the next apply_rules. Query: ${OPERATORS} ${TRIED}`,
  access: 'write',
  annotations: { ...WRITES, idempotentHint: true },
  input: z.strictObject({
    ruleId: z.string().min(1).max(64),
    query: z.string().min(1).max(100_000).optional(),
    projectId: projectId.optional(),
    weight,
    enabled: z.boolean().optional(),
  }),
  output: z.object({ rule, preview: rulePreview, warnings: ruleWarnings }),
  exampleIntent: "Change that rule's weight and disable it for now.",
  example: { ruleId: 'rul_01JQ8ZD0K3F6W2XGQ7N5YB8MTC', weight: 2 },
  exampleResult: { rule: { weight: 2, enabled: true } },
  async run(args, context) {
    const { ruleId, ...changes } = args;
    if (Object.values(changes).every((value) => value === undefined)) {
      throw new CalgateError(
        'invalid_argument',
        'Nothing to change: give query, projectId, weight and/or enabled.',
      );
    }
    const query = changes.query === undefined ? undefined : compiled(changes.query);
    const rules = rulesOf(context);
    const [stored] = await Promise.all([
      rules.listRules().then((list) => list.find((item) => item.id === ruleId)),
      changes.projectId === undefined ? undefined : projectIdOf(rules, changes.projectId),
    ]);
    // Tried before saving, so a failure leaves the rule as it was; an unknown ruleId is the store's to refuse.
    const tried = stored === undefined ? {} : await tryStored(query ?? stored.query, context);
    const saved = await rules.updateRule(ruleId, changes);
    return { rule: ruleOut(saved, await projectNames(rules)), ...tried };
  },
  text: warnedText,
});

/** tryRule for a query compiled or as stored; a stored query the language no longer reads is said so. */
function tryStored(query: CompiledQuery | string, context: Parameters<typeof tryRule>[1]) {
  if (typeof query !== 'string') {
    return tryRule(query, context);
  }
  const read = compileQuery(query);
  if (read.ok) {
    return tryRule(read.value, context);
  }
  return {
    warnings: [
      {
        kind: 'not_previewed' as const,
        message: `The saved query no longer reads, so the rule files nothing until its query is changed: ${read.error.message}`,
      },
    ],
  };
}

export const deleteRule = defineTool({
  name: 'delete_rule',
  toolset: 'rules',
  title: 'Delete a rule',
  description: 'Deletes a rule; what it filed stays until the next apply_rules.',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  input: z.strictObject({ ruleId: z.string().min(1).max(64) }),
  output: z.object({ deleted: rule }),
  exampleIntent: 'Delete the standup rule.',
  example: { ruleId: 'rul_01JQ8ZD0K3F6W2XGQ7N5YB8MTC' },
  exampleResult: { deleted: { project: 'Acme' } },
  async run(args, context) {
    const rules = rulesOf(context);
    const deleted = await rules.deleteRule(args.ruleId);
    return { deleted: ruleOut(deleted, await projectNames(rules)) };
  },
});

export const listRules = defineTool({
  name: 'list_rules',
  toolset: 'rules',
  title: 'List rules',
  description: "To see the tenant's classification rules, oldest first.",
  access: 'read',
  annotations: READS,
  input: z.strictObject({ projectId: projectId.optional() }),
  output: z.object({ rules: z.array(rule) }),
  exampleIntent: 'Show me all the classification rules.',
  example: {},
  exampleResult: { rules: [{ project: 'Acme', weight: 2 }] },
  async run(args, context) {
    const rules = rulesOf(context);
    if (args.projectId !== undefined) {
      await projectIdOf(rules, args.projectId);
    }
    const [list, names] = await Promise.all([rules.listRules(args.projectId), projectNames(rules)]);
    return { rules: list.map((item) => ruleOut(item, names)) };
  },
});
