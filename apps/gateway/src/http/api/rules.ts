import { CalgateError } from '@calgate/core';
import type { ProjectRecord, RuleRecord } from '@calgate/store';
import { applyRulesFor, checkRuleQuery, previewRuleFor, unknownProject } from '@calgate/tools';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';
import { ownerContext } from './owner.ts';
import { IsoWeek, oneRange, RANGE_MESSAGE, registerTimesheetRoutes, weekRange } from './timesheet.ts';

const Id = z.string().min(1).max(64);
const IdParams = z.strictObject({ id: Id });
const Colour = z.string().regex(/^#[0-9a-fA-F]{6}$/, { message: 'must be #RRGGBB' });
/** Longer queries are refused by the language itself, with a clear message. */
const Query = z.string().min(1, { message: 'give a query' }).max(100_000);
const Weight = z.number().int().min(1).max(1000);

const ProjectsQuery = z.strictObject({ includeArchived: z.enum(['true', 'false']).optional() });

const NewProject = z.strictObject({
  name: z.string().trim().min(1, { message: 'give the project a name' }).max(100),
  client: z.string().trim().max(100).optional(),
  colour: Colour.optional(),
});

/** A value sets, null clears the client, absent leaves as is; `archived` archives or restores. */
const ProjectPatch = z
  .strictObject({
    name: z.string().trim().min(1, { message: 'give the project a name' }).max(100).optional(),
    client: z.string().trim().max(100).nullable().optional(),
    colour: Colour.optional(),
    archived: z.boolean().optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message: 'give name, client, colour and/or archived',
  });

const NewRule = z.strictObject({
  query: Query,
  projectId: Id,
  weight: Weight.optional(),
  enabled: z.boolean().optional(),
});

const RulePatch = z
  .strictObject({
    query: Query.optional(),
    projectId: Id.optional(),
    weight: Weight.optional(),
    enabled: z.boolean().optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message: 'give query, projectId, weight and/or enabled',
  });

const PreviewBody = z.strictObject({
  query: Query,
  projectId: Id.optional(),
  /** The rule being edited: its stored version does not vote beside the new one. */
  ruleId: Id.optional(),
  weight: Weight.optional(),
  timeMin: z.string().min(1).max(64).optional(),
  timeMax: z.string().min(1).max(64).optional(),
  timeZone: z.string().min(1).max(64).optional(),
  maxResults: z.number().int().min(1).max(2500).default(25),
});

/** A week (`YYYY-Www`, Monday to Sunday) or a range, read in the timesheet's zone. */
const ApplyBody = z
  .strictObject({
    week: IsoWeek.optional(),
    timeMin: z.string().min(1).max(64).optional(),
    timeMax: z.string().min(1).max(64).optional(),
    timeZone: z.string().min(1).max(64).optional(),
  })
  .refine(oneRange, { message: RANGE_MESSAGE });

function projectView(project: ProjectRecord) {
  const { id, name, client, colour, archived, createdAt } = project;
  return { id, name, client, colour, archived, createdAt };
}

function ruleView(rule: RuleRecord, projects: ReadonlyMap<string, ProjectRecord>) {
  const { id, projectId, query, weight, enabled, createdAt, updatedAt } = rule;
  return {
    id,
    projectId,
    project: projects.get(projectId)?.name ?? projectId,
    query,
    weight,
    enabled,
    createdByKeyId: rule.createdByKeyId,
    createdByUserId: rule.createdByUserId,
    createdAt,
    updatedAt,
  };
}

async function projectMap(deps: ApiDeps, tenantId: string): Promise<Map<string, ProjectRecord>> {
  const projects = await deps.rulesRepository.projects.list(tenantId, { includeArchived: true });
  return new Map(projects.map((project) => [project.id, project]));
}

/** A projectId that is no project's id is refused with the id of the project meant, if any. */
async function checkProjectId(deps: ApiDeps, tenantId: string, projectId: string | undefined): Promise<void> {
  if (projectId === undefined) {
    return;
  }
  const projects = await projectMap(deps, tenantId);
  if (!projects.has(projectId)) {
    throw unknownProject(projectId, [...projects.values()]);
  }
}

/** Projects, classification rules, the live preview and filing for the Projects & rules page. */
export function registerRulesRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { projects, rules } = deps.rulesRepository;

  app.get('/api/v1/projects', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { includeArchived } = parse(ProjectsQuery, request.query);
    const list = await projects.list(tenantId, { includeArchived: includeArchived === 'true' });
    return { projects: list.map(projectView) };
  });

  app.post('/api/v1/projects', async (request, reply) => {
    const { tenantId } = await deps.guard.session(request);
    const body = parse(NewProject, request.body);
    const project = await projects.create(tenantId, {
      name: body.name,
      ...(body.client === undefined || body.client === '' ? {} : { client: body.client }),
      ...(body.colour === undefined ? {} : { colour: body.colour }),
    });
    reply.status(201);
    return { project: projectView(project) };
  });

  app.patch('/api/v1/projects/:id', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    const { archived, ...changes } = parse(ProjectPatch, request.body);
    const edits = Object.fromEntries(
      Object.entries({ ...changes, client: changes.client === '' ? null : changes.client }).filter(
        ([, value]) => value !== undefined,
      ),
    );
    let project = Object.keys(edits).length > 0 ? await projects.update(tenantId, id, edits) : null;
    if (archived !== undefined) {
      project = archived ? await projects.archive(tenantId, id) : await projects.unarchive(tenantId, id);
    }
    if (project === null) {
      throw new CalgateError('not_found', `No project ${id} in this tenant.`);
    }
    return { project: projectView(project) };
  });

  app.get('/api/v1/rules', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const [list, names] = await Promise.all([rules.list(tenantId), projectMap(deps, tenantId)]);
    return { rules: list.map((rule) => ruleView(rule, names)) };
  });

  app.post('/api/v1/rules', async (request, reply) => {
    const { tenantId, userId } = await deps.guard.session(request);
    const body = parse(NewRule, request.body);
    checkRuleQuery(body.query);
    await checkProjectId(deps, tenantId, body.projectId);
    const rule = await rules.create(tenantId, {
      projectId: body.projectId,
      query: body.query,
      ...(body.weight === undefined ? {} : { weight: body.weight }),
      ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
      createdBy: { userId },
    });
    reply.status(201);
    return { rule: ruleView(rule, await projectMap(deps, tenantId)) };
  });

  app.patch('/api/v1/rules/:id', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    const body = parse(RulePatch, request.body);
    if (body.query !== undefined) {
      checkRuleQuery(body.query);
    }
    await checkProjectId(deps, tenantId, body.projectId);
    const rule = await rules.update(
      tenantId,
      id,
      Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)),
    );
    return { rule: ruleView(rule, await projectMap(deps, tenantId)) };
  });

  app.delete('/api/v1/rules/:id', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    const rule = await rules.delete(tenantId, id);
    return { deleted: ruleView(rule, await projectMap(deps, tenantId)) };
  });

  app.post('/api/v1/rules/preview', async (request, reply) => {
    const session = await deps.guard.session(request);
    const { ruleId, ...body } = parse(PreviewBody, request.body);
    if (ruleId !== undefined && (await rules.get(session.tenantId, ruleId)) === null) {
      throw new CalgateError('not_found', `No rule ${ruleId} in this tenant.`);
    }
    return previewRuleFor({ ...body, replacesRuleId: ruleId }, await ownerContext(deps, reply, session));
  });

  app.post('/api/v1/rules/apply', async (request, reply) => {
    const session = await deps.guard.session(request);
    const { week, timeMin, timeMax, timeZone } = parse(ApplyBody, request.body);
    const range = week === undefined ? { timeMin: timeMin ?? '', timeMax: timeMax ?? '' } : weekRange(week);
    return applyRulesFor({ ...range, timeZone }, await ownerContext(deps, reply, session));
  });

  registerTimesheetRoutes(app, deps);
}
