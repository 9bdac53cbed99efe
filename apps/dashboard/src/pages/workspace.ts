import { api } from '../api.ts';
import { h, notice } from '../dom.ts';
import { zonePicker } from '../zone-picker.ts';

export interface Workspace {
  id: string;
  name: string;
  /** IANA zone; null: unset (keys fall back to their default calendar's zone). */
  timeZone: string | null;
}

/** The workspace's zone as the key forms name it: what "no zone of its own" means. */
export async function workspaceZone(): Promise<string | null> {
  return (await api<{ workspace: Workspace }>('GET', '/workspace')).workspace.timeZone;
}

/**
 * The workspace's name and time zone: the zone every key without its own answers in (and the
 * timesheet's default). Owners and admins change them; everyone else reads them.
 */
export async function workspaceSection(): Promise<HTMLElement> {
  const [{ workspace }, me] = await Promise.all([
    api<{ workspace: Workspace }>('GET', '/workspace'),
    api<{ user: { role?: string } }>('GET', '/auth/me'),
  ]);
  const manages = me.user.role === 'owner' || me.user.role === 'admin';
  const section = h('section', { class: 'card', 'aria-labelledby': 'workspace-title' });
  const status = h('div', { 'aria-live': 'polite' });
  const explain = h(
    'p',
    {},
    'Agents read and write times in this zone unless their key has a time zone of its own; the timesheet splits days in it. Unset: each key’s default calendar’s zone.',
  );
  if (!manages) {
    section.append(
      h('h2', { id: 'workspace-title' }, 'Workspace'),
      explain,
      h(
        'p',
        {},
        `${workspace.name} · time zone ${workspace.timeZone ?? 'not set'}. Owners and admins can change it.`,
      ),
    );
    return section;
  }
  const name = h('input', { id: 'workspace-name', maxlength: '100', required: true, value: workspace.name });
  const zone = zonePicker({
    id: 'workspace-zone',
    value: workspace.timeZone,
    empty: 'Not set: each key’s default calendar’s zone',
  });
  const form = h(
    'form',
    { class: 'workspace' },
    h('label', { for: 'workspace-name' }, 'Workspace name'),
    name,
    h('label', { for: 'workspace-zone' }, 'Workspace time zone'),
    zone.element,
    status,
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'secondary' }, 'Save workspace')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const body: { name?: string; timeZone?: string | null } = {};
      if (name.value.trim() !== workspace.name) {
        body.name = name.value.trim();
      }
      if (zone.value() !== workspace.timeZone) {
        body.timeZone = zone.value();
      }
      if (Object.keys(body).length === 0) {
        status.replaceChildren(notice('Nothing to save.'));
        return;
      }
      try {
        const saved = await api<{ workspace: Workspace }>('PATCH', '/workspace', body);
        Object.assign(workspace, saved.workspace);
        status.replaceChildren(
          notice(
            `Saved: ${saved.workspace.name}, time zone ${saved.workspace.timeZone ?? 'not set'}. Keys without their own zone answer in it from their next call.`,
          ),
        );
      } catch (error) {
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  section.append(h('h2', { id: 'workspace-title' }, 'Workspace'), explain, form);
  return section;
}
