/**
 * The progress of `warrant run` on stderr (docs/guide/cli.md, "Progress of `warrant run`"): the job
 * id when the job is created, then each step when it starts (`[3/200] running fs.read (read-3)`),
 * and a line for each step that is denied, fails or awaits approval. On a terminal the running step
 * is one live line with its elapsed time, redrawn at most every REDRAW_MS; elsewhere (a pipe, a
 * file, CI) each start is a line of its own. Every text from the plan, the authorizer or a
 * capability is shown printable (no control characters, so no terminal escape sequences) and cut
 * short.
 */
import type { RuntimeEvent } from '../index.js';
import { MAX_SHOWN_CHARS, shownText } from './terminal-text.js';

/** Where progress goes: stderr, or a fake stream in tests. */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Starts calling `tick` every `ms` milliseconds; returns the function that stops it. */
export type RepeatEvery = (ms: number, tick: () => void) => () => void;

export interface ProgressOptions {
  readonly stream: ProgressStream;
  /** The step ids of the plan, in order: the `3/200` of a line. */
  readonly stepIds: readonly string[];
  /** Milliseconds, for elapsed times and throttling (default `performance.now`). */
  readonly now?: () => number;
  /** The live line's timer on a terminal (default an unref'd `setInterval`). */
  readonly every?: RepeatEvery;
}

/** Shortest time between two redraws of the live line. */
export const REDRAW_MS = 100;

const CLEAR_LINE = '\r\x1b[2K';

/**
 * `text` safe to print on a terminal, on one line, cut to `max` characters: the one rule of every
 * output of the program (src/cli/terminal-text.ts), so a multi-line error reads the same here as
 * in `warrant jobs show`.
 */
export function printable(text: string, max = MAX_SHOWN_CHARS): string {
  return shownText(text, max);
}

const repeatEvery: RepeatEvery = (ms, tick) => {
  const timer = setInterval(tick, ms);
  // Never keeps the process alive: a job that never settles is still reported (src/cli/unsettled.ts).
  timer.unref();
  return () => clearInterval(timer);
};

/** Elapsed milliseconds as seconds with one decimal. */
export function elapsedText(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
}

interface RunningStep {
  readonly label: string;
  readonly started: number;
}

export class RunProgress {
  readonly #stream: ProgressStream;
  readonly #live: boolean;
  readonly #now: () => number;
  readonly #every: RepeatEvery;
  readonly #stepIds: readonly string[];
  #positions: Map<string, number> | undefined;
  #running: RunningStep | undefined;
  #lastDraw = Number.NEGATIVE_INFINITY;
  #drawn = false;
  #stopTimer: (() => void) | undefined;
  readonly #started = new Map<string, number>();
  /** Milliseconds each step ran, from `capability.started` to its end, by step id. */
  readonly durations = new Map<string, number>();

  constructor(options: ProgressOptions) {
    this.#stream = options.stream;
    this.#live = options.stream.isTTY === true;
    this.#now = options.now ?? (() => performance.now());
    this.#every = options.every ?? repeatEvery;
    this.#stepIds = options.stepIds;
  }

  /** The `[3/200]` of a step: its place in the plan. */
  #position(stepId: string): string {
    this.#positions ??= new Map(this.#stepIds.map((id, index) => [id, index + 1]));
    return `[${this.#positions.get(stepId) ?? '?'}/${this.#stepIds.length}]`;
  }

  /** Takes one runtime event (subscribe it to `'*'`). */
  observe(event: RuntimeEvent): void {
    if (event.type === 'job.created') {
      const count = this.#stepIds.length;
      this.#line(`job ${printable(event.jobId)}: ${count} step${count === 1 ? '' : 's'}`);
      return;
    }
    const stepId = event.stepId;
    if (stepId === undefined) return;
    const capability = printable(String(event.data?.capability ?? ''));
    const step = `${this.#position(stepId)} ${printable(stepId)} (${capability})`;
    switch (event.type) {
      case 'capability.started':
        this.#start(
          stepId,
          `${this.#position(stepId)} running ${capability} (${printable(stepId)})`,
        );
        return;
      case 'capability.completed':
        this.#end(stepId);
        return;
      case 'capability.denied':
        this.#end(stepId);
        this.#line(`  ✖ ${step} denied: ${printable(String(event.data?.reason))}`);
        return;
      case 'capability.failed': {
        const took = this.#end(stepId);
        const time = took === undefined ? '' : ` in ${took.toFixed(1)} ms`;
        this.#line(`  ✖ ${step} failed${time}: ${printable(String(event.data?.error))}`);
        return;
      }
      case 'approval.requested':
        this.#end(stepId);
        // A plan request (docs/api.md, "Plan warrants"): the whole plan waits, no step ran.
        if (event.data?.kind === 'plan') {
          const count = Array.isArray(event.data.steps) ? event.data.steps.length : 0;
          this.#line(`  ⏸ the plan (${count} step${count === 1 ? '' : 's'}) awaits approval`);
          return;
        }
        this.#line(
          `  ⏸ ${step} awaits approval: ${printable(String(event.data?.reason ?? 'approval required'))}`,
        );
        return;
      default:
        return;
    }
  }

  #start(stepId: string, label: string): void {
    const now = this.#now();
    this.#started.set(stepId, now);
    if (!this.#live) {
      this.#stream.write(`${label} ...\n`);
      return;
    }
    this.#running = { label, started: now };
    this.#stopTimer ??= this.#every(REDRAW_MS, () => this.#draw(false));
    this.#draw(false);
  }

  /** Records the step's duration; returns it (undefined for a step that never started). */
  #end(stepId: string): number | undefined {
    const started = this.#started.get(stepId);
    this.#running = undefined;
    if (started === undefined) return undefined;
    const took = this.#now() - started;
    this.durations.set(stepId, took);
    return took;
  }

  /** Redraws the live line, at most every REDRAW_MS unless forced. */
  #draw(force: boolean): void {
    const running = this.#running;
    if (running === undefined) return;
    const now = this.#now();
    if (!force && now - this.#lastDraw < REDRAW_MS) return;
    this.#lastDraw = now;
    const text = `${running.label} ${elapsedText(now - running.started)}`;
    // One character short of the width, so the terminal never wraps the line it rewrites.
    const width = (this.#stream.columns ?? 80) - 1;
    this.#stream.write(`${CLEAR_LINE}${width > 0 ? text.slice(0, width) : text}`);
    this.#drawn = true;
  }

  /** Clears the live line (on a terminal) so that a permanent line can be written. */
  #clear(): void {
    if (!this.#drawn) return;
    this.#stream.write(CLEAR_LINE);
    this.#drawn = false;
    this.#lastDraw = Number.NEGATIVE_INFINITY;
  }

  /** A permanent line. */
  #line(text: string): void {
    this.#clear();
    this.#stream.write(`${text}\n`);
  }

  /** Stops the live line: the timer, and what is left on the terminal. */
  finish(): void {
    this.#stopTimer?.();
    this.#stopTimer = undefined;
    this.#running = undefined;
    this.#clear();
  }
}
