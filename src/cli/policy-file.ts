/**
 * `--policy <file.cedar>`: the runtime's authorizer is `cedarAuthorizer` over the file's policies
 * (docs/api.md, "Policy as code: Cedar"). A file that cannot be read, is not UTF-8 or holds
 * policies Cedar refuses is a usage error (exit 2) naming the file and the line.
 */
import { cedarAuthorizer, type ExecutionAuthorizer } from '../index.js';
import { readInputFile } from './input-file.js';
import { firstLine, UsageError } from './usage-error.js';

/** The text of a `.cedar` file, read as the program reads every file it is given. */
export async function readPolicyFile(file: string, label: string): Promise<string> {
  const bytes = await readInputFile(file, label);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${label}: not UTF-8 text`);
  }
}

export async function loadPolicyAuthorizer(file: string): Promise<ExecutionAuthorizer> {
  const label = `--policy ${file}`;
  const policies = await readPolicyFile(file, label);
  try {
    return cedarAuthorizer({ policies });
  } catch (error) {
    throw new UsageError(`${label}: ${firstLine(error)}`);
  }
}
