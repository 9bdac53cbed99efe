/**
 * Change notifications: `POST /subscriptions` on a mailbox's events (validated by echoing a
 * `validationToken` as Graph does), renewal by PATCH, DELETE, and a POST of `{value: [...]}`
 * to the notification URL after each change. Outlook event subscriptions live at most 10,080
 * minutes. Deliveries are recorded for tests; a receiver that fails does not stop the next one.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { graphRoute } from './api.ts';
import { GraphError, graphErrors } from './errors.ts';
import { json, noContent, type Route } from './http.ts';
import { context } from './me-routes.ts';
import type { CalendarRecord, MicrosoftState } from './state.ts';

export const MAX_SUBSCRIPTION_MINUTES = 10_080;

export interface Subscription {
  id: string;
  mailbox: string;
  userId: string;
  resource: string;
  calendarId: string;
  changeTypes: string[];
  notificationUrl: string;
  clientState?: string;
  expiresAt: number;
  applicationId: string;
}

export interface NotificationRecord {
  subscriptionId: string;
  changeType: string;
  eventId: string;
  /** HTTP status of the receiver's answer; 0 when it could not be reached. */
  status: number;
  at: number;
}

const CHANGE_TYPES = ['created', 'updated', 'deleted'];

export class Notifier {
  readonly subscriptions = new Map<string, Subscription>();
  readonly deliveries: NotificationRecord[] = [];
  /** While paused, notifications are lost (as when Graph cannot reach the receiver). */
  paused = false;
  readonly #state: MicrosoftState;
  #pending = new Set<Promise<void>>();

  constructor(state: MicrosoftState) {
    this.#state = state;
  }

  clear(): void {
    this.subscriptions.clear();
    this.deliveries.length = 0;
    this.paused = false;
  }

  /** Resolves when every notification sent so far has been answered or has failed. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) {
      await Promise.all([...this.#pending]);
    }
  }

  changed(calendar: CalendarRecord, eventId: string, changeType: 'created' | 'updated' | 'deleted'): void {
    const now = this.#state.now();
    for (const sub of this.subscriptions.values()) {
      if (sub.calendarId !== calendar.id || sub.expiresAt <= now || !sub.changeTypes.includes(changeType)) {
        continue;
      }
      const record: NotificationRecord = { subscriptionId: sub.id, changeType, eventId, status: 0, at: now };
      this.deliveries.push(record);
      if (this.paused) {
        continue;
      }
      const resource = `Users/${sub.userId}/Events/${eventId}`;
      const body = {
        value: [
          {
            subscriptionId: sub.id,
            subscriptionExpirationDateTime: new Date(sub.expiresAt).toISOString(),
            changeType,
            resource,
            resourceData: { '@odata.type': '#Microsoft.Graph.Event', '@odata.id': resource, id: eventId },
            clientState: sub.clientState ?? null,
            tenantId: this.#state.tenantId,
          },
        ],
      };
      const sent = fetch(sub.notificationUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5_000),
      }).then(
        async (res) => {
          record.status = res.status;
          await res.arrayBuffer().catch(() => undefined);
        },
        () => undefined,
      );
      this.#pending.add(sent);
      void sent.finally(() => this.#pending.delete(sent));
    }
  }
}

async function validate(url: string): Promise<void> {
  const token = `Validation: ${randomBytes(12).toString('hex')}`;
  const target = new URL(url);
  target.searchParams.set('validationToken', token);
  const failed = () =>
    new GraphError(
      400,
      'InvalidRequest',
      'Subscription validation request failed. Response must exactly match validationToken query parameter.',
    );
  try {
    const res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 200 || (await res.text()) !== token) {
      throw failed();
    }
  } catch (error) {
    throw error instanceof GraphError ? error : failed();
  }
}

function expiryOf(value: unknown, now: number): number {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) {
    throw graphErrors.badRequest('expirationDateTime must be a date-time with an offset.');
  }
  if (at <= now) {
    throw new GraphError(400, 'InvalidRequest', 'Subscription expiration must be in the future.');
  }
  if (at > now + MAX_SUBSCRIPTION_MINUTES * 60_000) {
    throw new GraphError(
      400,
      'InvalidRequest',
      `Subscription expiration can only be ${MAX_SUBSCRIPTION_MINUTES} minutes in the future.`,
    );
  }
  return at;
}

export function subscriptionRoutes(state: MicrosoftState, notifier: Notifier): Route[] {
  const render = (sub: Subscription) => ({
    id: sub.id,
    resource: sub.resource,
    applicationId: sub.applicationId,
    changeType: sub.changeTypes.join(','),
    clientState: sub.clientState ?? null,
    notificationUrl: sub.notificationUrl,
    expirationDateTime: new Date(sub.expiresAt).toISOString(),
    creatorId: sub.userId,
    includeResourceData: false,
    latestSupportedTlsVersion: 'v1_2',
    notificationContentType: null,
    lifecycleNotificationUrl: null,
  });
  const own = (id: string, mailbox: string) => {
    const sub = notifier.subscriptions.get(id);
    if (!sub || sub.mailbox !== mailbox) {
      throw new GraphError(404, 'ResourceNotFound', 'The object was not found.');
    }
    return sub;
  };
  return [
    graphRoute(
      state,
      'POST',
      '/subscriptions',
      'subscriptions.create',
      'calendarRead',
      async (ctx, caller) => {
        const b = ctx.body;
        const resource = typeof b.resource === 'string' ? b.resource : '';
        const m = /^\/?me\/(?:events|calendar\/events|calendars\/([^/]+)\/events)$/i.exec(resource);
        const calendar = m
          ? m[1] === undefined
            ? state.defaultCalendar(caller.mailbox)
            : state.calendars.get(m[1])
          : undefined;
        if (!m || !calendar || calendar.mailbox !== caller.mailbox) {
          throw new GraphError(
            400,
            'InvalidRequest',
            `Resource '${resource}' is not supported for subscriptions.`,
          );
        }
        const changeTypes = String(b.changeType ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        if (changeTypes.length === 0 || changeTypes.some((c) => !CHANGE_TYPES.includes(c))) {
          throw new GraphError(400, 'InvalidRequest', `changeType '${String(b.changeType)}' is invalid.`);
        }
        const url = typeof b.notificationUrl === 'string' ? b.notificationUrl : '';
        if (!URL.canParse(url)) {
          throw new GraphError(400, 'InvalidRequest', 'notificationUrl must be an absolute URL.');
        }
        const expiresAt = expiryOf(b.expirationDateTime, state.now());
        await validate(url);
        const sub: Subscription = {
          id: randomUUID(),
          mailbox: caller.mailbox,
          userId: caller.user.id,
          resource,
          calendarId: calendar.id,
          changeTypes,
          notificationUrl: url,
          ...(typeof b.clientState === 'string' ? { clientState: b.clientState } : {}),
          expiresAt,
          applicationId: randomUUID(),
        };
        notifier.subscriptions.set(sub.id, sub);
        return json({ '@odata.context': context(ctx, 'subscriptions/$entity'), ...render(sub) }, 201);
      },
    ),
    graphRoute(
      state,
      'GET',
      '/subscriptions/:subscriptionId',
      'subscriptions.get',
      'calendarRead',
      (ctx, caller) => json(render(own(ctx.params.subscriptionId ?? '', caller.mailbox))),
    ),
    graphRoute(
      state,
      'PATCH',
      '/subscriptions/:subscriptionId',
      'subscriptions.update',
      'calendarRead',
      (ctx, caller) => {
        const sub = own(ctx.params.subscriptionId ?? '', caller.mailbox);
        sub.expiresAt = expiryOf(ctx.body.expirationDateTime, state.now());
        return json(render(sub));
      },
    ),
    graphRoute(
      state,
      'DELETE',
      '/subscriptions/:subscriptionId',
      'subscriptions.delete',
      'calendarRead',
      (ctx, caller) => {
        notifier.subscriptions.delete(own(ctx.params.subscriptionId ?? '', caller.mailbox).id);
        return noContent();
      },
    ),
  ];
}
