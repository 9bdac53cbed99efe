/**
 * Who is inside a tenant, for marking events organised from outside: the tenant's own addresses
 * (its connected accounts and its users) and the domains of those addresses, except public mail
 * domains, where an address counts only exactly (one gmail.com user says nothing of another).
 */

/** Mail domains shared by unrelated people, and Google's shared calendar domains. */
const PUBLIC_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'yahoo.com',
  'ymail.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'pm.me',
  'gmx.com',
  'gmx.net',
  'gmx.de',
  'web.de',
  'mail.com',
  'zoho.com',
  'yandex.com',
  'yandex.ru',
  'fastmail.com',
  'hey.com',
  'group.calendar.google.com',
  'resource.calendar.google.com',
  'group.v.calendar.google.com',
  'import.calendar.google.com',
]);

function domainOf(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  return at < 0 ? undefined : address.slice(at + 1);
}

/** Whether a domain is a public mail domain (or a subdomain of one, such as Yahoo's country ones). */
function isPublic(domain: string): boolean {
  return PUBLIC_DOMAINS.has(domain) || /^(yahoo|hotmail|outlook|live)\.[a-z.]+$/.test(domain);
}

export class Insiders {
  readonly #addresses = new Set<string>();
  readonly #domains = new Set<string>();

  /** `addresses`: the tenant's accounts' and users' emails, and its calendars' upstream ids. */
  constructor(addresses: Iterable<string>) {
    for (const raw of addresses) {
      const address = raw.trim().toLowerCase();
      const domain = domainOf(address);
      if (domain === undefined || domain === '') {
        continue;
      }
      this.#addresses.add(address);
      if (!isPublic(domain)) {
        this.#domains.add(domain);
      }
    }
  }

  /** Whether mail from this address comes from inside the tenant. */
  includes(email: string): boolean {
    const address = email.trim().toLowerCase();
    if (this.#addresses.has(address)) {
      return true;
    }
    const domain = domainOf(address);
    return domain !== undefined && this.#domains.has(domain);
  }
}
