import { applyRules, classifyEvent } from './classify.ts';
import { previewRule } from './preview-rule.ts';
import { createProject, listProjects } from './projects.ts';
import { createClassificationRule, createRule, deleteRule, listRules, updateRule } from './rule-tools.ts';
import { getTimeSummary } from './time-summary.ts';

/** The 'rules' toolset: projects, classification rules, filing and timesheets. */
export const RULES_TOOLS = [
  previewRule,
  createRule,
  createClassificationRule,
  updateRule,
  deleteRule,
  listRules,
  createProject,
  listProjects,
  classifyEvent,
  applyRules,
  getTimeSummary,
];

export { type ApplyRequest, applyRulesFor } from './classify.ts';
export { compiled as checkRuleQuery, unknownProject } from './common.ts';
export { type PreviewRequest, previewRuleFor } from './preview-rule.ts';
export { type TimesheetRequest, timesheetFor } from './time-summary.ts';
export { localDays, timesheetCsv } from './timesheet.ts';
