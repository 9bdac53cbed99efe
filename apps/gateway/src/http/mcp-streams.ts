import { isCalgateError } from '@calgate/core';
import type { KeyAccess } from '@calgate/store';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyAuthenticator } from '../auth.ts';
import type { CalendarChange } from '../calendar-changes.ts';

export interface ToolStreamOptions {
  /** How often an SSE comment keeps idle proxies and clients from dropping a stream. */
  keepAliveMs: number;
  /** How often every key with open streams is looked up again (through the key cache). */
  recheckMs: number;
  maxPerKey: number;
  maxTotal: number;
}

export const DEFAULT_TOOL_STREAM_OPTIONS: ToolStreamOptions = {
  keepAliveMs: 15_000,
  recheckMs: 1_500,
  maxPerKey: 5,
  maxTotal: 1_000,
};

/** One open GET stream: where to write, and the tool names its client was last told about. */
export interface ToolStream {
  write(chunk: string): void;
  close(): void;
  /** Bytes written but not yet taken by the client. */
  buffered(): number;
  /**
   * Tells a subscriptions/listen stream that a resource it may read changed (its client's filter
   * decides whether it hears it). GET streams have no per-resource subscriptions and leave it out.
   */
  updated?(uri: string): void;
}

interface Tracked {
  stream: ToolStream;
  tools: string;
  resources: string;
}

interface KeyStreams {
  /** The bearer header, so the key can be looked up again like any request would be. */
  authorization: string;
  tenantId: string;
  streams: Set<Tracked>;
}

export const LIST_CHANGED = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`;
export const RESOURCES_CHANGED = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' })}\n\n`;
/** A client that leaves this much unread is not listening; its stream is dropped. */
const MAX_BUFFERED = 64 * 1024;

/**
 * The open GET /api/mcp streams of this process, grouped by key. Grants can change on any
 * gateway process, so instead of listening for changes each key with open streams is looked up
 * again every `recheckMs` (one lookup per key, through the authenticator's short cache) and at
 * once when this process invalidates the cache. A changed tool set sends
 * notifications/tools/list_changed; a key that stopped authenticating has its streams closed.
 */
export class ToolListStreams {
  readonly #options: ToolStreamOptions;
  readonly #authenticator: KeyAuthenticator;
  readonly #toolsOf: (access: KeyAccess) => string;
  readonly #resourcesOf: (access: KeyAccess) => string;
  readonly #readable: (access: KeyAccess) => ReadonlyMap<string, string>;
  readonly #log: FastifyBaseLogger;
  readonly #byKey = new Map<string, KeyStreams>();
  readonly #unsubscribe: () => void;
  #total = 0;
  #timers: NodeJS.Timeout[] = [];
  #checking: Promise<void> | undefined;
  #again = false;

  constructor(options: {
    authenticator: KeyAuthenticator;
    /** The names of the tools the key may see, in a comparable form. */
    toolsOf: (access: KeyAccess) => string;
    /** What the key's resource list is made of (its readable calendars), in a comparable form. */
    resourcesOf?: (access: KeyAccess) => string;
    /** The calendars the key may open as resources: calendar id → resource URI. */
    readableResources?: (access: KeyAccess) => ReadonlyMap<string, string>;
    log: FastifyBaseLogger;
    limits?: Partial<ToolStreamOptions> | undefined;
  }) {
    this.#options = { ...DEFAULT_TOOL_STREAM_OPTIONS, ...options.limits };
    this.#authenticator = options.authenticator;
    this.#toolsOf = options.toolsOf;
    this.#resourcesOf = options.resourcesOf ?? (() => '');
    this.#readable = options.readableResources ?? (() => new Map());
    this.#log = options.log;
    this.#unsubscribe = this.#authenticator.onInvalidate((_from, tenantId) => {
      // A change to one tenant concerns only streams of its keys.
      const concerned =
        tenantId === undefined || [...this.#byKey.values()].some((group) => group.tenantId === tenantId);
      if (this.#total > 0 && concerned) {
        void this.recheck();
      }
    });
  }

  /** Why another stream for this key may not open now, or undefined when it may. */
  refusal(keyId: string): string | undefined {
    if ((this.#byKey.get(keyId)?.streams.size ?? 0) >= this.#options.maxPerKey) {
      return `This API key already has ${this.#options.maxPerKey} open event streams on this server; close one first.`;
    }
    if (this.#total >= this.#options.maxTotal) {
      return 'This server has too many open event streams; try again later.';
    }
    return undefined;
  }

  /** Tracks a stream until the returned function is called (when the client goes away). */
  open(access: KeyAccess, authorization: string, stream: ToolStream): () => void {
    let group = this.#byKey.get(access.keyId);
    if (group === undefined) {
      group = { authorization, tenantId: access.tenantId, streams: new Set() };
      this.#byKey.set(access.keyId, group);
    }
    const tracked = { stream, tools: this.#toolsOf(access), resources: this.#resourcesOf(access) };
    group.streams.add(tracked);
    this.#total++;
    this.#startTimers();
    let removed = false;
    return () => {
      if (removed) {
        return;
      }
      removed = true;
      this.#remove(access.keyId, tracked);
    };
  }

  /** Looks every key with open streams up again; concurrent calls share one pass plus one more. */
  recheck(): Promise<void> {
    if (this.#checking !== undefined) {
      this.#again = true;
      return this.#checking;
    }
    this.#checking = (async () => {
      do {
        this.#again = false;
        await Promise.all([...this.#byKey].map(([keyId, group]) => this.#recheckKey(keyId, group)));
      } while (this.#again);
    })().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  /**
   * Calendars the mirror saw change: each listen stream whose key may read one of them, as a
   * request of that key would be checked right now (looked up again through the key cache), is
   * told its resource was updated. A key that no longer authenticates has its streams closed; a
   * calendar of another tenant, or one the key may not read, is never named to it.
   */
  async calendarsChanged(changes: readonly CalendarChange[]): Promise<void> {
    const tenants = new Set(changes.map((change) => change.tenantId));
    await Promise.all(
      [...this.#byKey].map(async ([keyId, group]) => {
        if (!tenants.has(group.tenantId) || ![...group.streams].some((tracked) => tracked.stream.updated)) {
          return;
        }
        const access = await this.#lookUp(keyId, group);
        if (access === undefined || access.tenantId !== group.tenantId) {
          return;
        }
        const readable = this.#readable(access);
        const uris = changes.flatMap((change) => {
          const uri = change.tenantId === access.tenantId ? readable.get(change.calendarId) : undefined;
          return uri === undefined ? [] : [uri];
        });
        for (const tracked of [...group.streams]) {
          for (const uri of uris) {
            tracked.stream.updated?.(uri);
          }
        }
      }),
    );
  }

  /** Ends every stream (server shutdown). */
  close(): void {
    this.#unsubscribe();
    for (const [keyId, group] of [...this.#byKey]) {
      for (const tracked of [...group.streams]) {
        this.#remove(keyId, tracked);
        tracked.stream.close();
      }
    }
    this.#stopTimers();
  }

  /**
   * The key of a group as a request would find it now, or undefined: the lookup failed (the
   * streams stay, the next pass tries again) or the key no longer authenticates (they are closed).
   */
  async #lookUp(keyId: string, group: KeyStreams): Promise<KeyAccess | undefined> {
    let auth: Awaited<ReturnType<KeyAuthenticator['authenticate']>>;
    try {
      auth = await this.#authenticator.authenticate(group.authorization);
    } catch (error) {
      // The database is unreachable: keep the streams, the next pass tries again. An outage is
      // logged once by the key check itself; only something else is worth a line here.
      if (!isCalgateError(error) || error.code !== 'unavailable') {
        this.#log.warn({ err: error }, 'tool-list stream key lookup failed');
      }
      return undefined;
    }
    if (!auth.ok) {
      for (const tracked of [...group.streams]) {
        this.#remove(keyId, tracked);
        tracked.stream.close();
      }
      return undefined;
    }
    return auth.access;
  }

  async #recheckKey(keyId: string, group: KeyStreams): Promise<void> {
    const access = await this.#lookUp(keyId, group);
    if (access === undefined) {
      return;
    }
    const tools = this.#toolsOf(access);
    const resources = this.#resourcesOf(access);
    for (const tracked of [...group.streams]) {
      if (tracked.tools !== tools) {
        tracked.tools = tools;
        this.#send(keyId, tracked, LIST_CHANGED);
      }
      if (tracked.resources !== resources) {
        tracked.resources = resources;
        this.#send(keyId, tracked, RESOURCES_CHANGED);
      }
    }
  }

  #send(keyId: string, tracked: Tracked, chunk: string): void {
    if (tracked.stream.buffered() > MAX_BUFFERED) {
      this.#remove(keyId, tracked);
      tracked.stream.close();
      return;
    }
    tracked.stream.write(chunk);
  }

  #remove(keyId: string, tracked: Tracked): void {
    const group = this.#byKey.get(keyId);
    if (group?.streams.delete(tracked) !== true) {
      return;
    }
    this.#total--;
    if (group.streams.size === 0) {
      this.#byKey.delete(keyId);
    }
    if (this.#total === 0) {
      this.#stopTimers();
    }
  }

  #startTimers(): void {
    if (this.#timers.length > 0) {
      return;
    }
    const keepAlive = setInterval(() => {
      for (const [keyId, group] of [...this.#byKey]) {
        for (const tracked of [...group.streams]) {
          this.#send(keyId, tracked, ': keep-alive\n\n');
        }
      }
    }, this.#options.keepAliveMs);
    const recheck = setInterval(() => void this.recheck(), this.#options.recheckMs);
    keepAlive.unref();
    recheck.unref();
    this.#timers = [keepAlive, recheck];
  }

  #stopTimers(): void {
    for (const timer of this.#timers) {
      clearInterval(timer);
    }
    this.#timers = [];
  }
}
