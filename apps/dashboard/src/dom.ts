/** A tiny DOM builder: text is always set as text, never parsed as HTML. */
export type Child = Node | string | number | null | undefined | false;
type Attr = string | boolean | undefined | ((event: Event) => void);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, Attr> = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else if (typeof value === 'string') {
      element.setAttribute(name, value);
    }
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      element.append(child instanceof Node ? child : String(child));
    }
  }
  return element;
}

/** A status line that screen readers announce. */
export function notice(text: string, kind: 'error' | 'info' = 'info'): HTMLElement {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A button that shows "Copy", is named `label` for screen readers, copies `text` and says so. */
export function copyButton(text: string, label: string): HTMLButtonElement {
  const name = () => ['Copy', h('span', { class: 'sr' }, label.replace(/^Copy/, ''))];
  const button = h('button', { type: 'button', class: 'secondary' }, name());
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Select and copy manually';
    }
    setTimeout(() => button.replaceChildren(...name()), 2000);
  });
  return button;
}

export function when(value: string | null | undefined): string {
  return value === null || value === undefined ? '—' : new Date(value).toLocaleString();
}

let dialogs = 0;

/** What confirmDialog asks and shows. */
export interface ConfirmOptions {
  /** The question; the dialog's accessible name. */
  question: string;
  /** What will happen; the dialog's accessible description. */
  detail: string;
  /** The confirm button's text, named after the action ("Revoke key"). */
  confirm: string;
  /** A red confirm button, for what cannot be undone. */
  danger?: boolean;
  /** More fields between the description and the buttons (e.g. a select the caller reads after). */
  fields?: Child[];
}

/**
 * Asks before acting, in a native modal <dialog> (focus is kept inside, Escape cancels) named by
 * its question and described by what will happen. Resolves true only on the confirm button; the
 * dialog is removed either way.
 */
export function confirmDialog(options: ConfirmOptions): Promise<boolean> {
  dialogs += 1;
  const ids = { question: `confirm-question-${dialogs}`, detail: `confirm-detail-${dialogs}` };
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'card confirm', 'aria-labelledby': ids.question, 'aria-describedby': ids.detail },
      h('h2', { id: ids.question }, options.question),
      h('p', { id: ids.detail }, options.detail),
      ...(options.fields ?? []),
      h(
        'div',
        { class: 'row' },
        h(
          'button',
          {
            type: 'button',
            class: options.danger === true ? 'danger' : '',
            onclick: () => dialog.close('confirm'),
          },
          options.confirm,
        ),
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('cancel') }, 'Cancel'),
      ),
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'confirm');
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
