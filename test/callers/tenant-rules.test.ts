// docs/api.md, "Reading and tenants": the rules no policy can widen.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  askWithinTenant,
  isParty,
  isSubmitter,
  sameTenant,
  tenantOf,
} from '../../src/callers/tenant-rules.js';

describe('tenant rules', () => {
  it('reads a tenant only from a string field', () => {
    assert.equal(tenantOf({ id: 'a', tenant: 'acme' }), 'acme');
    assert.equal(tenantOf({ id: 'a', tenant: 7 } as never), undefined);
    assert.equal(tenantOf(undefined), undefined);
    assert.equal(sameTenant({ id: 'a' }, { id: 'b' }), true);
    assert.equal(sameTenant({ id: 'a', tenant: 'acme' }, { id: 'b' }), false);
  });

  it('knows the submitter by id and tenant; a job without an id has none', () => {
    assert.equal(isSubmitter({ id: 'a', tenant: 't' }, { id: 'a', tenant: 't' }), true);
    assert.equal(isSubmitter({ id: 'a', tenant: 'u' }, { id: 'a', tenant: 't' }), false);
    assert.equal(isSubmitter({ id: 'a' }, { id: 'a', tenant: 't' }), false);
    assert.equal(isSubmitter({}, {}), false);
    assert.equal(isSubmitter({ id: 'a' }, undefined), false);
  });

  it('counts the subject and every actor of the chain as parties, within the tenant (issue 50)', () => {
    const recorded = {
      id: 'ada',
      tenant: 't',
      actor: { id: 'assistant', tenant: 't', actor: { id: 'planner' } },
    };
    for (const id of ['ada', 'assistant', 'planner'])
      assert.equal(isParty({ id, tenant: 't' }, recorded), true, id);
    assert.equal(isParty({ id: 'assistant', tenant: 'u' }, recorded), false, 'another tenant');
    assert.equal(isParty({ id: 'assistant' }, recorded), false, 'no tenant');
    assert.equal(isParty({ id: 'bob', tenant: 't' }, recorded), false);
    assert.equal(isParty({ tenant: 't' }, recorded), false, 'no id');
    assert.equal(
      isSubmitter({ id: 'assistant', tenant: 't' }, recorded),
      false,
      'not the submitter',
    );
  });

  it('asks a policy only within the tenant, and fails closed', async () => {
    let asked = 0;
    const yes = () => {
      asked += 1;
      return true;
    };
    assert.equal(
      await askWithinTenant({ id: 'e', tenant: 'evil' }, { tenant: 'acme' }, yes),
      false,
    );
    assert.equal(await askWithinTenant({ id: 'e' }, { tenant: 'acme' }, yes), false);
    assert.equal(asked, 0);
    assert.equal(await askWithinTenant({ id: 'o', tenant: 'acme' }, { tenant: 'acme' }, yes), true);
    assert.equal(await askWithinTenant({ id: 'o' }, {}, async () => true), true);
    for (const answer of [() => 'true', () => 1, async () => false, () => undefined]) {
      assert.equal(await askWithinTenant({ id: 'o' }, {}, answer), false);
    }
    const throws = () => {
      throw new Error('policy failed');
    };
    assert.equal(await askWithinTenant({ id: 'o' }, {}, throws), false);
    assert.equal(
      await askWithinTenant({ id: 'o' }, {}, () => Promise.reject(new Error('no'))),
      false,
    );
  });
});
