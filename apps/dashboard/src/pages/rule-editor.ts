import { api } from '../api.ts';
import { h } from '../dom.ts';

export interface Project {
  id: string;
  name: string;
  client: string | null;
  colour: string;
  archived: boolean;
}

export interface Rule {
  id: string;
  projectId: string;
  project: string;
  query: string;
  weight: number;
  enabled: boolean;
}

interface Time {
  dateTime?: string;
  date?: string;
}

interface Preview {
  matches: { calendarId: string; eventId: string; summary?: string; start: Time; end: Time }[];
  matchCount: number;
  truncated: boolean;
  conflicts: {
    eventId: string;
    currentProject: string;
    currentSource: 'rule' | 'manual';
    proposedProject?: string | null;
  }[];
  conflictCount: number;
  timeMin: string;
  timeMax: string;
  /** Said when the query matches nothing in the window, so a rule that would never file is noticed. */
  warnings?: { kind: string; message: string }[];
}

/** How long typing must pause before the preview asks the gateway. */
const DEBOUNCE_MS = 300;
const SHOWN_MATCHES = 5;

const when = (time: Time) =>
  time.dateTime === undefined ? `${time.date ?? ''} (all day)` : new Date(time.dateTime).toLocaleString();

/** The query with the character at `position` marked, so the eye finds the problem. */
function pointAt(query: string, position: number): HTMLElement {
  const at = Math.min(position, query.length);
  return h(
    'code',
    { class: 'pre' },
    query.slice(0, at),
    h('mark', {}, query.slice(at, at + 1) || ' '),
    query.slice(at + 1),
  );
}

/**
 * The rule editor: a query, its project and weight. Typing previews the matches over the last 30
 * days (debounced); saving a rule that would refile events already filed elsewhere asks first.
 */
export function ruleEditor(options: { projects: () => Project[]; onSaved: (message: string) => void }) {
  let editing: Rule | null = null;
  let sequence = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const query = h('textarea', {
    id: 'rule-query',
    name: 'query',
    rows: '3',
    required: true,
    maxlength: '2000',
    spellcheck: 'false',
    'aria-describedby': 'rule-query-help rule-query-error',
  });
  const help = h(
    'p',
    { id: 'rule-query-help', class: 'muted' },
    'Gmail-style, e.g. title:standup · domain:acme.com · title:"team sync" -response:declined · (domain:a.com OR domain:b.com) · day-of-week:mon,wed · time-of-day:>17:00',
  );
  const error = h('div', { id: 'rule-query-error', class: 'notice error' });
  const project = h('select', { id: 'rule-project', name: 'project', required: true });
  const weight = h('input', {
    id: 'rule-weight',
    name: 'weight',
    type: 'number',
    min: '1',
    max: '1000',
    value: '1',
  });
  const preview = h('div', { id: 'rule-preview', 'aria-live': 'polite', 'aria-atomic': 'true' });
  const confirm = h('div', {});
  const heading = h('h3', { id: 'rule-editor-heading' }, 'New rule');
  const save = h('button', { type: 'submit' }, 'Save rule');
  const cancel = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Cancel editing');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'rule-editor-heading', novalidate: true },
    heading,
    h('label', { for: 'rule-query' }, 'Query'),
    query,
    help,
    error,
    h('label', { for: 'rule-project' }, 'Project'),
    project,
    h('label', { for: 'rule-weight' }, 'Weight'),
    weight,
    preview,
    confirm,
    h('div', { class: 'row' }, save, cancel),
  );

  const projectName = (id: string | null | undefined) =>
    id === null || id === undefined
      ? 'pending'
      : id === 'skip'
        ? 'skip'
        : (options.projects().find((item) => item.id === id)?.name ?? id);

  function body() {
    return {
      query: query.value,
      ...(project.value === '' ? {} : { projectId: project.value }),
      weight: Math.max(1, Number(weight.value) || 1),
    };
  }

  function showError(text: string): void {
    const position = /position (\d+)/.exec(text)?.[1];
    query.setAttribute('aria-invalid', 'true');
    error.replaceChildren(h('p', { role: 'alert' }, text));
    if (position !== undefined) {
      error.append(pointAt(query.value, Number(position)));
    }
  }

  function clearError(): void {
    query.removeAttribute('aria-invalid');
    error.replaceChildren();
  }

  async function runPreview(): Promise<Preview | null> {
    const mine = ++sequence;
    confirm.replaceChildren();
    if (query.value.trim() === '') {
      clearError();
      preview.replaceChildren();
      return null;
    }
    try {
      const answer = await api<Preview>('POST', '/rules/preview', {
        ...body(),
        ...(editing === null ? {} : { ruleId: editing.id }),
      });
      if (mine !== sequence) {
        return null;
      }
      clearError();
      preview.replaceChildren(
        h(
          'p',
          { id: 'rule-match-count' },
          `${answer.matchCount} ${answer.matchCount === 1 ? 'match' : 'matches'} in the last 30 days`,
          answer.conflictCount > 0 ? `, ${answer.conflictCount} already filed elsewhere` : '',
          '.',
        ),
        ...(answer.warnings ?? []).map((warning) =>
          h('p', { class: 'notice warning', 'data-warning': warning.kind }, warning.message),
        ),
        answer.matches.length === 0
          ? ''
          : h(
              'ul',
              { 'aria-label': 'First matches' },
              answer.matches
                .slice(0, SHOWN_MATCHES)
                .map((match) => h('li', {}, `${match.summary ?? '(no title)'} — ${when(match.start)}`)),
            ),
      );
      return answer;
    } catch (failure) {
      if (mine === sequence) {
        preview.replaceChildren();
        showError(failure instanceof Error ? failure.message : String(failure));
      }
      return null;
    }
  }

  function schedule(): void {
    clearTimeout(timer);
    timer = setTimeout(() => void runPreview(), DEBOUNCE_MS);
  }

  function reset(): void {
    editing = null;
    form.reset();
    heading.textContent = 'New rule';
    save.textContent = 'Save rule';
    cancel.hidden = true;
    clearError();
    preview.replaceChildren();
    confirm.replaceChildren();
  }

  async function store(): Promise<void> {
    const payload = body();
    const saved =
      editing === null
        ? await api<{ rule: Rule }>('POST', '/rules', payload)
        : await api<{ rule: Rule }>('PATCH', `/rules/${editing.id}`, payload);
    const text = `Rule ${saved.rule.query} saved for ${saved.rule.project}.`;
    reset();
    options.onSaved(text);
  }

  async function submit(): Promise<void> {
    clearTimeout(timer);
    if (project.value === '') {
      error.replaceChildren(h('p', { role: 'alert' }, 'Choose a project for the rule.'));
      project.focus();
      return;
    }
    const answer = await runPreview();
    if (answer === null) {
      query.focus();
      return;
    }
    if (answer.conflictCount === 0) {
      await store().catch((failure: unknown) =>
        showError(failure instanceof Error ? failure.message : String(failure)),
      );
      return;
    }
    const summaries = new Map(answer.matches.map((match) => [match.eventId, match.summary ?? '(no title)']));
    const keep = h('button', { type: 'button', class: 'secondary' }, 'Go back');
    const go = h('button', { type: 'button' }, 'Save anyway');
    confirm.replaceChildren(
      h(
        'div',
        { class: 'card conflicts', role: 'alertdialog', 'aria-labelledby': 'conflicts-heading' },
        h(
          'h4',
          { id: 'conflicts-heading' },
          `${answer.conflictCount} matching events are already filed elsewhere`,
        ),
        h(
          'ul',
          {},
          answer.conflicts
            .slice(0, SHOWN_MATCHES)
            .map((conflict) =>
              h(
                'li',
                {},
                `${summaries.get(conflict.eventId) ?? conflict.eventId}: ${projectName(conflict.currentProject)} (${conflict.currentSource === 'manual' ? 'filed by hand, kept' : 'by a rule'})`,
                conflict.proposedProject === undefined
                  ? ''
                  : ` → ${projectName(conflict.proposedProject)} after applying rules`,
              ),
            ),
        ),
        h('div', { class: 'row' }, go, keep),
      ),
    );
    go.addEventListener('click', () => {
      void store().catch((failure: unknown) =>
        showError(failure instanceof Error ? failure.message : String(failure)),
      );
    });
    keep.addEventListener('click', () => {
      confirm.replaceChildren();
      query.focus();
    });
    go.focus();
  }

  query.addEventListener('input', schedule);
  project.addEventListener('change', schedule);
  weight.addEventListener('input', schedule);
  cancel.addEventListener('click', reset);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submit();
  });

  return {
    element: form,
    /** Fills the editor with a stored rule; saving then changes that rule. */
    edit(rule: Rule): void {
      editing = rule;
      query.value = rule.query;
      project.value = rule.projectId;
      weight.value = String(rule.weight);
      heading.textContent = 'Edit rule';
      save.textContent = 'Save changes';
      cancel.hidden = false;
      query.focus();
      void runPreview();
    },
    refreshProjects(): void {
      const chosen = project.value;
      project.replaceChildren(
        h('option', { value: '' }, 'Choose a project'),
        ...options.projects().map((item) => h('option', { value: item.id }, item.name)),
      );
      project.value = chosen;
    },
  };
}
