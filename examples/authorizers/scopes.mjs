// An --authorizer for `warrant serve` that decides from the scopes of the authenticated caller
// (docs/guide/http.md, "What the authorizer sees"): every caller may run `read` capabilities, a
// `write` needs the scope "plans:write", anything else (`destructive`) needs "plans:destructive".
// The scopes come from the client's credentials, never from a request body:
//
//   warrant serve --callers callers.json --authorizer examples/authorizers/scopes.mjs
//
// Plain JavaScript, so it loads without a TypeScript toolchain.

/** The scope each risk needs; a risk not listed needs the strongest one. */
const NEEDED = { write: 'plans:write', destructive: 'plans:destructive' };

/** @type {import('warrant').ExecutionAuthorizer} */
const scopes = {
  name: 'scopes',
  authorize({ capability, caller }) {
    if (capability.risk === 'read') return { decision: 'allow' };
    const needed = Object.hasOwn(NEEDED, capability.risk)
      ? NEEDED[capability.risk]
      : NEEDED.destructive;
    const granted = Array.isArray(caller?.scopes) ? caller.scopes : [];
    if (granted.includes(needed)) return { decision: 'allow' };
    return {
      decision: 'deny',
      reason: `${capability.name} needs the scope ${needed}; ${caller?.id ?? 'an anonymous caller'} has ${
        granted.length === 0 ? 'none' : granted.join(', ')
      }`,
    };
  },
};

export default scopes;
