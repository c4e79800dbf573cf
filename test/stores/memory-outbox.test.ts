// The memory store's outbox (src/jobs/stores/memory-outbox.ts) against the outbox contract.
import { describe } from 'node:test';
import { MemoryJobStore } from '../../src/jobs/stores/memory-store.js';
import { outboxContract } from './outbox-contract.js';

describe('MemoryOutbox', () => outboxContract(() => new MemoryJobStore(100)));
