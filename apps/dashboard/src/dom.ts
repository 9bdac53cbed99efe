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
