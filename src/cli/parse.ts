import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './usage-error.js';

export type OptionValues = Record<string, string | boolean | string[] | undefined> & {
  help?: boolean;
};

export interface ParsedCommand {
  readonly values: OptionValues;
  readonly positionals: string[];
}

/** node:util parseArgs, strict, with `--help` on every command and usage errors as UsageError. */
export function parseCommand(
  args: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
): ParsedCommand {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as OptionValues, positionals };
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'invalid arguments');
  }
}

/** The value of a string option (parseArgs guarantees its type for declared options). */
export function text(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
