import { isCalgateError } from '@calgate/core';
import type { KeyAccess } from '@calgate/store';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyAuthenticator } from '../auth.ts';

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
}

interface Tracked {
  stream: ToolStream;
  tools: string;
  resources: string;
}

interface KeyStreams {
  /** The bearer header, so the key can be looked up again like any request would be. */
  authorization: string;
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
    log: FastifyBaseLogger;
    limits?: Partial<ToolStreamOptions> | undefined;
  }) {
    this.#options = { ...DEFAULT_TOOL_STREAM_OPTIONS, ...options.limits };
    this.#authenticator = options.authenticator;
    this.#toolsOf = options.toolsOf;
    this.#resourcesOf = options.resourcesOf ?? (() => '');
    this.#log = options.log;
    this.#unsubscribe = this.#authenticator.onInvalidate(() => {
      if (this.#total > 0) {
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
      group = { authorization, streams: new Set() };
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

  async #recheckKey(keyId: string, group: KeyStreams): Promise<void> {
    let auth: Awaited<ReturnType<KeyAuthenticator['authenticate']>>;
    try {
      auth = await this.#authenticator.authenticate(group.authorization);
    } catch (error) {
      // The database is unreachable: keep the streams, the next pass tries again. An outage is
      // logged once by the key check itself; only something else is worth a line here.
      if (!isCalgateError(error) || error.code !== 'unavailable') {
        this.#log.warn({ err: error }, 'tool-list stream key lookup failed');
      }
      return;
    }
    if (!auth.ok) {
      for (const tracked of [...group.streams]) {
        this.#remove(keyId, tracked);
        tracked.stream.close();
      }
      return;
    }
    const tools = this.#toolsOf(auth.access);
    const resources = this.#resourcesOf(auth.access);
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
