// The memory store's limit counters (src/stores/memory/memory-limits.ts) against the limits contract.
import { describe } from 'node:test';
import { MemoryJobStore } from '../../../src/stores/memory/memory-store.js';
import { runLimitContract } from '../limits-contract.js';

describe('memory store: limit counters', () => runLimitContract(() => new MemoryJobStore(100)));
