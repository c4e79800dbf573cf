import type { JobEventType } from '../jobs/job.js';

/** A job event as observers receive it (docs/api.md, "runtime.subscribe"). Not isolated from mutation (docs/api.md, "runtime.subscribe"). */
export interface RuntimeEvent {
  readonly id: string;
  readonly type: JobEventType;
  readonly timestamp: string;
  readonly jobId: string;
  readonly stepId?: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

export type RuntimeEventHandler = (event: RuntimeEvent) => void | Promise<void>;
