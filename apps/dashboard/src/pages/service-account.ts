import { ApiError, api } from '../api.ts';
import { copyButton, h, notice } from '../dom.ts';

/** Calendars shared with Calgate's Google service account: the email to share with, then add by id. */
export async function serviceAccountSection(onAdded: () => Promise<void>): Promise<HTMLElement> {
  const section = h(
    'section',
    { class: 'card', 'aria-labelledby': 'sa-title' },
    h('h2', { id: 'sa-title' }, 'Share a calendar with Calgate'),
  );
  let info: { email: string; instructions: string };
  try {
    info = await api('GET', '/google/service-account');
  } catch (error) {
    if (error instanceof ApiError && error.status === 503) {
      section.append(
        h(
          'p',
          { class: 'muted' },
          'No Google service account is configured on this Calgate (GOOGLE_SERVICE_ACCOUNT_KEY_FILE).',
        ),
      );
      return section;
    }
    throw error;
  }
  const status = h('div', { 'aria-live': 'polite' });
  const calendarId = h('input', {
    id: 'sa-calendar',
    name: 'calendarId',
    required: true,
    placeholder: 'team@group.calendar.google.com',
  });
  const access = h(
    'select',
    { id: 'sa-access', name: 'access' },
    h('option', { value: 'read' }, 'Read only'),
    h('option', { value: 'write' }, 'Read and write'),
    h('option', { value: 'none' }, 'No access yet'),
  );
  const form = h(
    'form',
    {},
    h('label', { for: 'sa-calendar' }, 'Calendar id'),
    calendarId,
    h('label', { for: 'sa-access' }, 'Give every existing API key'),
    access,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Add shared calendar')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      try {
        await api('POST', '/connections/service-account', {
          calendarId: calendarId.value.trim(),
          access: access.value,
        });
        status.replaceChildren(notice(`Added ${calendarId.value.trim()}.`));
        form.reset();
        await onAdded();
      } catch (error) {
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  section.append(
    h('p', {}, info.instructions),
    h(
      'div',
      { class: 'row' },
      h('code', { id: 'sa-email' }, info.email),
      copyButton(info.email, 'Copy the service-account email'),
    ),
    form,
    status,
  );
  return section;
}
