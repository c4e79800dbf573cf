// The memory store's outbox (src/stores/memory/memory-outbox.ts) against the outbox contract.
import { describe } from 'node:test';
import { MemoryJobStore } from '../../../src/stores/memory/memory-store.js';
import { outboxContract } from '../outbox-contract.js';

describe('MemoryOutbox', () => outboxContract(() => new MemoryJobStore(100)));
