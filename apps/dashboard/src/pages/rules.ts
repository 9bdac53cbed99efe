import { api } from '../api.ts';
import { h, notice } from '../dom.ts';
import { type Project, type Rule, ruleEditor } from './rule-editor.ts';
import { swatch, timesheetSection } from './timesheet.ts';

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Projects & rules: projects time is filed into, the classification rules with a live-previewing
 * editor, and the weekly timesheet. Everything here covers all of the tenant's calendars.
 */
export async function renderRules(root: HTMLElement): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const projectList = h('div', {});
  const ruleList = h('div', {});
  let projects: Project[] = [];

  async function act(work: () => Promise<string>): Promise<void> {
    let result: HTMLElement;
    try {
      result = notice(await work());
    } catch (error) {
      result = notice(message(error), 'error');
    }
    await load();
    await timesheet.load();
    status.replaceChildren(result);
  }

  const editor = ruleEditor({
    projects: () => projects.filter((project) => !project.archived),
    onSaved: (text) => void act(async () => text),
  });
  const timesheet = timesheetSection();

  function projectRow(project: Project): HTMLElement {
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, swatch(project.colour), ` ${project.name}`),
      h('td', {}, project.client ?? '—'),
      h('td', {}, h('code', {}, project.colour)),
      h('td', {}, project.archived ? 'archived' : 'active'),
      h(
        'td',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: () =>
              void act(async () => {
                await api('PATCH', `/projects/${project.id}`, { archived: !project.archived });
                return `${project.name} ${project.archived ? 'restored' : 'archived'}.`;
              }),
          },
          `${project.archived ? 'Restore' : 'Archive'} ${project.name}`,
        ),
      ),
    );
  }

  function ruleRow(rule: Rule): HTMLElement {
    return h(
      'tr',
      {},
      h('td', {}, h('code', {}, rule.query)),
      h('td', {}, rule.project),
      h('td', { class: 'num' }, rule.weight),
      h(
        'td',
        {},
        h(
          'label',
          { class: 'toggle' },
          h('input', {
            type: 'checkbox',
            checked: rule.enabled,
            'aria-label': `Enabled: ${rule.query}`,
            onchange: (event) => {
              const enabled = (event.target as HTMLInputElement).checked;
              void act(async () => {
                await api('PATCH', `/rules/${rule.id}`, { enabled });
                return `Rule ${rule.query} ${enabled ? 'enabled' : 'disabled'}.`;
              });
            },
          }),
          ' Enabled',
        ),
      ),
      h(
        'td',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-label': `Edit rule ${rule.query}`,
            onclick: () => editor.edit(rule),
          },
          'Edit',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'aria-label': `Delete rule ${rule.query}`,
            onclick: () =>
              void act(async () => {
                await api('DELETE', `/rules/${rule.id}`);
                return `Rule ${rule.query} deleted.`;
              }),
          },
          'Delete',
        ),
      ),
    );
  }

  function table(caption: string, columns: string[], rows: HTMLElement[]): HTMLElement {
    return h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        {},
        h('caption', {}, caption),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            columns.map((name) => h('th', { scope: 'col' }, name)),
          ),
        ),
        h('tbody', {}, rows),
      ),
    );
  }

  async function load(): Promise<void> {
    const [projectAnswer, ruleAnswer] = await Promise.all([
      api<{ projects: Project[] }>('GET', '/projects?includeArchived=true'),
      api<{ rules: Rule[] }>('GET', '/rules'),
    ]);
    projects = projectAnswer.projects;
    projectList.replaceChildren(
      projects.length === 0
        ? h('p', {}, 'No projects yet: create one to file time into.')
        : table('Projects', ['Name', 'Client', 'Colour', 'State', 'Actions'], projects.map(projectRow)),
    );
    ruleList.replaceChildren(
      ruleAnswer.rules.length === 0
        ? h('p', {}, 'No rules yet: write one in the editor below.')
        : table('Rules', ['Query', 'Project', 'Weight', 'Enabled', 'Actions'], ruleAnswer.rules.map(ruleRow)),
    );
    editor.refreshProjects();
  }

  const name = h('input', { id: 'project-name', name: 'name', required: true, maxlength: '100' });
  const client = h('input', { id: 'project-client', name: 'client', maxlength: '100' });
  const colour = h('input', { id: 'project-colour', name: 'colour', type: 'color', value: '#4f46e5' });
  // Left alone, Calgate picks a colour no live project uses.
  let colourChosen = false;
  colour.addEventListener('input', () => {
    colourChosen = true;
  });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-project' },
    h('h2', { id: 'new-project' }, 'New project'),
    h('label', { for: 'project-name' }, 'Project name'),
    name,
    h('label', { for: 'project-client' }, 'Client (optional)'),
    client,
    h('label', { for: 'project-colour' }, 'Colour (optional: Calgate picks a free one)'),
    colour,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Create project')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(async () => {
      const body = {
        name: name.value,
        ...(colourChosen ? { colour: colour.value } : {}),
        ...(client.value ? { client: client.value } : {}),
      };
      const { project } = await api<{ project: Project }>('POST', '/projects', body);
      form.reset();
      colourChosen = false;
      return `Project ${project.name} created.`;
    });
  });

  root.append(
    h(
      'p',
      {},
      'Rules file the time of events on all of your calendars into projects. Test a query in the editor: matches show as you type.',
    ),
    status,
    h(
      'section',
      { 'aria-labelledby': 'projects-heading' },
      h('h2', { id: 'projects-heading' }, 'Projects'),
      form,
      projectList,
    ),
    h(
      'section',
      { 'aria-labelledby': 'rules-heading' },
      h('h2', { id: 'rules-heading' }, 'Rules'),
      ruleList,
      editor.element,
    ),
    timesheet.element,
  );
  await load();
  await timesheet.load();
}
