/**
 * Who owns the jobs a store writes (docs/api.md, "Recovery"; docs/decisions.md, "Recovery at
 * start"). Each store a runtime opens is one owner, with a random id. On SQLite (one machine) a
 * dead owner is told from a live one by its process: the process id, the process's start time
 * (`/proc/<pid>/stat` field 22, in clock ticks since boot) and the boot id
 * (`/proc/sys/kernel/random/boot_id`), so neither a reused pid nor a reboot passes for the owner.
 * Where `/proc` is missing (macOS, Windows) the start time and boot id are absent and only the pid
 * is checked: a reused pid then keeps the dead owner's jobs waiting, never runs them twice.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The process an owner lives in, as recorded with it. */
export interface OwnerProcess {
  readonly pid: number;
  /** Field 22 of `/proc/<pid>/stat`; absent where there is no `/proc`. */
  readonly startTime?: string;
  /** The kernel's boot id; absent where there is no `/proc`. */
  readonly bootId?: string;
}

/** A new owner id: `owner-` and 24 hex digits (no two runtimes draw the same one). */
export function newOwnerId(): string {
  return `owner-${randomBytes(12).toString('hex')}`;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The start time of a process (field 22 of its stat line), or undefined when unreadable. */
export function processStartTime(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // Field 2 (the command) is in parentheses and may hold spaces: count from the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // `rest[0]` is field 3 (the state): field 22 is rest[19].
  const start = rest[19];
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

/** The boot id, or undefined where the kernel does not give one. */
export function bootId(): string | undefined {
  return readText('/proc/sys/kernel/random/boot_id')?.trim() || undefined;
}

let self: OwnerProcess | undefined;

/** This process, as an owner record carries it. */
export function thisProcess(): OwnerProcess {
  if (self === undefined) {
    const start = processStartTime(process.pid);
    const boot = bootId();
    const found: { pid: number; startTime?: string; bootId?: string } = { pid: process.pid };
    if (start !== undefined) found.startTime = start;
    if (boot !== undefined) found.bootId = boot;
    self = Object.freeze(found);
  }
  return self;
}

/** True while a process with this pid exists (a process of another user counts). */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

/**
 * True when the recorded process may still be running: same boot, the pid exists and started
 * at the recorded time. Anything unknown counts as alive (its jobs wait; none runs twice).
 */
export function processAlive(recorded: OwnerProcess): boolean {
  if (!Number.isSafeInteger(recorded.pid) || recorded.pid <= 0) return false;
  const here = thisProcess();
  if (recorded.bootId !== undefined && here.bootId !== undefined && recorded.bootId !== here.bootId)
    return false;
  if (!pidExists(recorded.pid)) return false;
  if (recorded.startTime === undefined) return true;
  const start = processStartTime(recorded.pid);
  return start === undefined || start === recorded.startTime;
}
