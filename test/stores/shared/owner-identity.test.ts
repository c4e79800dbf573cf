// Owner identity (src/stores/shared/owner-identity.ts): a recorded process is alive only while a
// process with its pid exists, started at the recorded time, in the same boot.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  bootId,
  newOwnerId,
  processAlive,
  processStartTime,
  thisProcess,
} from '../../../src/stores/shared/owner-identity.js';

const linux = existsSync('/proc/self/stat');

describe('owner identity', () => {
  it('draws distinct owner ids of one shape', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newOwnerId()));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, /^owner-[0-9a-f]{24}$/);
  });

  it('records this process: pid, start time and boot id (on Linux)', () => {
    const self = thisProcess();
    assert.equal(self.pid, process.pid);
    assert.ok(Object.isFrozen(self));
    if (linux) {
      assert.match(self.startTime ?? '', /^\d+$/);
      assert.equal(self.startTime, processStartTime(process.pid));
      assert.match(self.bootId ?? '', /^[0-9a-f-]{36}$/);
    }
    assert.equal(processAlive(self), true);
  });

  it(
    'a live pid with another start time, or another boot, is not the owner',
    { skip: !linux },
    () => {
      const self = thisProcess();
      assert.equal(processAlive({ ...self, startTime: `${Number(self.startTime) + 1}` }), false);
      assert.equal(
        processAlive({ ...self, bootId: '00000000-0000-0000-0000-000000000000' }),
        false,
      );
      assert.equal(processAlive({ pid: 0 }), false);
      assert.equal(bootId(), self.bootId);
    },
  );

  it('a process that ended is gone', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)']);
    await once(child, 'spawn');
    const pid = child.pid as number;
    const recorded = { pid, startTime: processStartTime(pid), bootId: bootId() };
    assert.equal(processAlive(recorded), true);
    child.kill('SIGKILL');
    await once(child, 'exit');
    assert.equal(processAlive(recorded), false);
  });
});
