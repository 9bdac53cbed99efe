import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { READS, rulesOf } from './common.ts';

const project = z.object({
  id: z.string(),
  name: z.string(),
  client: z.string().nullable(),
  colour: z.string(),
  archived: z.boolean(),
});

export const createProject = defineTool({
  name: 'create_project',
  toolset: 'rules',
  title: 'Create a project',
  description: "A project that rules and classify_event file time into, shared by the tenant's keys.",
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: z.strictObject({
    name: z.string().min(1).max(100).describe('Unique, whatever the case.'),
    client: z.string().min(1).max(100).optional(),
    colour: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'must be #RRGGBB')
      .optional()
      .describe('#RRGGBB; default: a free one.'),
  }),
  output: z.object({ project }),
  exampleIntent: 'Start a new project called Acme Website to file my hours into.',
  example: { name: 'Acme', client: 'Acme Corp' },
  exampleResult: { project: { name: 'Acme', client: 'Acme Corp', archived: false } },
  async run(args, context) {
    return { project: await rulesOf(context).createProject(args) };
  },
});

export const listProjects = defineTool({
  name: 'list_projects',
  toolset: 'rules',
  title: 'List projects',
  description: 'Projects time is filed into, by name.',
  access: 'read',
  annotations: READS,
  input: z.strictObject({ includeArchived: z.boolean().default(false) }),
  output: z.object({ projects: z.array(project) }),
  exampleIntent: 'Which projects do I have for tracking time?',
  example: {},
  exampleResult: { projects: [{ name: 'Acme' }] },
  async run(args, context) {
    return { projects: await rulesOf(context).listProjects(args.includeArchived) };
  },
});
