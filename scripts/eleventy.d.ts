// The few parts of Eleventy (which ships no types) that the documentation site uses.
declare module '@11ty/eleventy' {
  export class Eleventy {
    constructor(input: string, output: string, options?: Record<string, unknown>);
    init(): Promise<void>;
    watch(): Promise<void>;
    serve(port: number): Promise<void>;
  }
  export const IdAttributePlugin: unknown;
  export const InputPathToUrlTransformPlugin: unknown;
}
