/**
 * What the running command is waiting for. When the event loop drains while a command has not
 * finished (a module whose top-level await never settles, an authorizer or a capability whose
 * promise never settles, with nothing else left to run), Node would exit 0 as if all went well; the
 * program exits 1 instead, with one line naming this (docs/guide/cli.md, "Before anything runs").
 */

let describeWaiting: () => string = () => 'the command never settled';

/**
 * Names what the command awaits from now on: a text, or a function called only when the event
 * loop drains, for descriptions that change as work goes on.
 */
export function waitingFor(description: string | (() => string)): void {
  describeWaiting = typeof description === 'string' ? () => description : description;
}

/** The line (without the `warrant <command>: ` prefix) for a command that never settled. */
export function unsettledLine(): string {
  try {
    return describeWaiting().split('\n')[0] ?? '';
  } catch {
    return 'the command never settled';
  }
}
