// Types for bench/legacy-corpus.mjs (imported by the crash test).
export interface LegacyCorpusOptions {
  agents?: string[];
  sessionsPerAgent?: number;
  linesPerSession?: number;
  meanLineBytes?: number;
  seed?: number;
  orphanEvery?: number;
  extras?: Array<"truncated" | "corrupt">;
  mtime?: number;
}
export function prng(seed: number): () => number;
export function generateLegacyCorpus(stateDir: string, options?: LegacyCorpusOptions): { files: number; bytes: number; lines: number };
