import { ConfigError } from '@ledgerkey/process';

/** The problems a configuration loader stops on (empty when it loads). */
export function configProblemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
