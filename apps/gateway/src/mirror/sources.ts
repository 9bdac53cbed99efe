/**
 * The sync sources the mirror can use, by provider. Each provider that keeps its calendars in
 * the mirror brings a ConnectionSources (Google's is google/sync-sources.ts): a SyncSource
 * authorised for one connection, made per sync job and per push-channel call. The jobs, the
 * planner and the channels only see this registry, so a provider plugs in by being listed here.
 */
import type { MirrorConnection, MirrorFormat, SyncSource } from '@calgate/providers';

export interface ConnectionSources {
  /** The provider (`connections.provider`) whose calendars these sources sync. */
  readonly provider: string;
  /** The provider as users know it ('Google'), for messages. */
  readonly label: string;
  /** Whether its sources have push hooks (else its calendars are polled only). */
  readonly push: boolean;
  /** How its events are kept as mirror rows (the sources' `format`, needed without a connection). */
  readonly format: MirrorFormat;
  /**
   * A sync source whose requests carry a valid credential of the connection; `refresh` skips
   * the stored access token (the upstream refused it) and asks for a new one.
   */
  forConnection(connection: MirrorConnection, refresh?: boolean): Promise<SyncSource>;
}

export class SyncSources {
  readonly #byProvider: Map<string, ConnectionSources>;

  constructor(sources: readonly ConnectionSources[]) {
    this.#byProvider = new Map(sources.map((source) => [source.provider, source]));
  }

  /** Providers whose calendars the mirror syncs. */
  get providers(): string[] {
    return [...this.#byProvider.keys()];
  }

  /** Providers whose calendars get push channels. */
  get pushProviders(): string[] {
    return [...this.#byProvider.values()].filter((source) => source.push).map((source) => source.provider);
  }

  /** The provider's sources, if the mirror keeps its calendars. */
  get(provider: string): ConnectionSources | undefined {
    return this.#byProvider.get(provider);
  }

  /** The source for a connection of `provider`; a provider without sources is a programming error. */
  forConnection(provider: string, connection: MirrorConnection, refresh?: boolean): Promise<SyncSource> {
    const sources = this.#byProvider.get(provider);
    if (sources === undefined) {
      return Promise.reject(new Error(`The mirror has no sync source for provider '${provider}'.`));
    }
    return sources.forConnection(connection, refresh);
  }
}
