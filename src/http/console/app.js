// The audit console of `warrant serve` (docs/guide/http.md, "Audit console"; SECURITY.md): plain
// DOM code, no framework, no build step. Everything it shows comes from the JSON API of the same
// server, asked with `Authorization: Bearer <token>` when the server wants a token (kept in
// sessionStorage, this tab only; never a cookie: `credentials: 'omit'`). Every recorded value
// reaches the page as text (text nodes and textContent), never as markup: a result holding
// `<script>` shows as text.
/* global document, history, location, sessionStorage, fetch, URLSearchParams, window */
'use strict';
(() => {
  const TOKEN_KEY = 'warrant.console.token';
  /** Refresh while jobs run, and otherwise (docs/guide/http.md, "Audit console"). */
  const FAST_MS = 2000;
  const IDLE_MS = 5000;
  const JOB_STATUSES = [
    'created',
    'queued',
    'executing',
    'awaiting_approval',
    'completed',
    'failed',
    'cancelled',
  ];
  const RUNNING = new Set(['created', 'queued', 'executing']);
  /** A job in one of these can still be cancelled (docs/api.md, "runtime.cancelJob"). */
  const CANCELLABLE = new Set(['created', 'queued', 'executing', 'awaiting_approval']);

  const byId = (id) => document.getElementById(id);
  const view = byId('view');

  // ---- Building the page: text only -------------------------------------------------------

  /** An element with attributes and children; strings and numbers become text nodes. */
  function h(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes ?? {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'class') node.className = String(value);
      else if (typeof value === 'function') node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof window.Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /** Any recorded value as JSON text: on one line when short, else indented. */
  function jsonText(value) {
    if (value === undefined) return '—';
    try {
      const line = JSON.stringify(value);
      return line.length <= 100 ? line : JSON.stringify(value, null, 2);
    } catch {
      return String(value);
    }
  }

  const block = (value, label) =>
    h('pre', { class: 'value', 'aria-label': label, 'data-field': label }, jsonText(value));

  const time = (iso) =>
    typeof iso === 'string' ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—';

  function duration(from, to) {
    const start = Date.parse(from);
    const end = to === undefined ? Date.now() : Date.parse(to);
    if (!Number.isFinite(start) || !Number.isFinite(end)) return '—';
    const ms = Math.max(0, end - start);
    if (ms < 1000) return `${ms} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
  }

  const badge = (text, kind = text) =>
    h('span', { class: `badge badge-${String(kind).replace(/[^a-z_]/g, '')}` }, text);

  const jobLink = (id, text) => h('a', { href: `#/jobs/${encodeURIComponent(id)}` }, text);

  function fields(pairs) {
    return h(
      'dl',
      { class: 'fields' },
      pairs
        .filter(([, value]) => value !== undefined)
        .map(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]),
    );
  }

  function show(...children) {
    view.replaceChildren(...children.flat(Infinity).filter(Boolean));
  }

  // ---- The token (this tab only) and the API ---------------------------------------------

  const token = {
    get: () => sessionStorage.getItem(TOKEN_KEY),
    set: (value) => sessionStorage.setItem(TOKEN_KEY, value),
    clear: () => sessionStorage.removeItem(TOKEN_KEY),
  };

  /**
   * The operator token `warrant serve` prints in the console's address (`/#token=...`; docs/api.md,
   * "The operator token"): kept like a pasted one, then taken out of the address bar (the page
   * goes on at the job list) so it is not left in view, in a bookmark or in a shared link.
   */
  function takeTokenFromAddress() {
    const match = /^#token=([^&]*)$/.exec(location.hash);
    if (match === null) return;
    let value;
    try {
      value = decodeURIComponent(match[1]);
    } catch {
      value = '';
    }
    history.replaceState(null, '', `${location.pathname}${location.search}#/`);
    if (value === '') return;
    token.set(value);
    admitted = false;
    callerShownFor = undefined;
    byId('token-form').hidden = true;
  }

  /** Thrown after a 401: the page is asking for a token. */
  class NeedsToken extends Error {}

  function askForToken(rejected) {
    stopRefresh();
    callerShownFor = undefined;
    byId('signed-in').textContent = '';
    byId('token-message').textContent = rejected
      ? 'The token was not accepted. Enter another one.'
      : 'This server needs a bearer token.';
    byId('token-form').hidden = false;
    byId('token-input').focus();
    show(h('p', { class: 'muted' }, 'Waiting for a token.'));
  }

  /** One API request; `{ status, ok, body }`. A 401 asks for a token and throws NeedsToken. */
  async function api(path, options = {}) {
    const headers = { accept: 'application/json' };
    const current = token.get();
    if (current !== null) headers.authorization = `Bearer ${current}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'omit',
      cache: 'no-store',
    });
    if (response.status === 401) {
      admitted = false;
      askForToken(current !== null);
      throw new NeedsToken('a token is needed');
    }
    let body;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    return { status: response.status, ok: response.ok, body };
  }

  /** The body of a 2xx answer; else an Error with the server's one-line message. */
  async function apiData(path) {
    const answer = await api(path);
    if (!answer.ok) throw new Error(errorOf(answer));
    return answer.body;
  }

  const errorOf = (answer) =>
    `${answer.status} ${typeof answer.body?.error === 'string' ? answer.body.error : 'error'}`;

  const query = (values) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(values))
      if (value !== undefined && value !== '') params.set(name, value);
    const text = params.toString();
    return text === '' ? '' : `?${text}`;
  };

  // ---- Routing and refresh ---------------------------------------------------------------

  let generation = 0;
  let timer;
  function stopRefresh() {
    clearTimeout(timer);
    timer = undefined;
  }
  /** Runs `load` again after `ms` unless the page moved on meanwhile. */
  function refreshLater(current, ms, load) {
    stopRefresh();
    timer = setTimeout(() => {
      if (current === generation) load();
    }, ms);
  }
  const isCurrent = (current) => current === generation;

  function failure(error) {
    if (error instanceof NeedsToken) return;
    show(h('p', { class: 'error', role: 'alert' }, `Could not load: ${error.message}`));
  }

  /**
   * Whether the API answered this tab without a 401 yet. Until it has, one request goes first
   * and the others wait for it: a server that needs a token costs one 401, not one per request.
   */
  let admitted = false;

  function render() {
    takeTokenFromAddress();
    if (!admitted) {
      generation += 1;
      stopRefresh();
      updateApprovalCount().then(
        () => {
          admitted = true;
          render();
        },
        (error) => {
          if (!(error instanceof NeedsToken)) {
            admitted = true;
            render();
          }
        },
      );
      return;
    }
    generation += 1;
    stopRefresh();
    const current = generation;
    const hash = location.hash.replace(/^#/, '') || '/';
    const [path, search = ''] = hash.split('?');
    const job = /^\/jobs\/([^/]+)$/.exec(path);
    for (const [id, active] of [
      ['nav-jobs', path === '/' || job !== null],
      ['nav-approvals', path === '/approvals'],
      ['nav-capabilities', path === '/capabilities'],
      ['nav-notifications', path === '/notifications'],
      ['nav-limits', path === '/limits'],
    ])
      byId(id).classList.toggle('active', active);
    byId('forget-token').hidden = token.get() === null;
    let shown;
    if (path === '/') shown = jobsView(current, new URLSearchParams(search));
    else if (job !== null) shown = jobView(current, decodeURIComponent(job[1]));
    else if (path === '/approvals') shown = approvalsView(current);
    else if (path === '/capabilities') shown = capabilitiesView(current);
    else if (path === '/notifications') shown = notificationsView(current);
    else if (path === '/limits') shown = limitsView(current);
    else
      shown = Promise.resolve(show(h('p', {}, 'No such page. '), h('a', { href: '#/' }, 'Jobs')));
    shown.catch(failure);
    updateApprovalCount().catch(() => {});
    updateCaller().catch(() => {});
  }

  /** The token (or null) the header's caller was read with; undefined: none shown. */
  let callerShownFor;

  /** Who the server takes this tab for (GET /api/caller): read again when the token changes. */
  async function updateCaller() {
    const current = token.get();
    if (callerShownFor === current) return;
    const who = await apiData('api/caller');
    callerShownFor = current;
    byId('signed-in').textContent = callerText(who);
  }

  function callerText(who) {
    if (who?.authenticated !== true)
      return 'Not signed in: requests run as http (open the address warrant serve printed)';
    if (typeof who.id !== 'string') return 'No caller';
    const tenant = typeof who.tenant === 'string' ? ` · tenant ${who.tenant}` : '';
    const count = typeof who.scopes === 'number' ? who.scopes : 0;
    const as = typeof who.actor === 'string' ? `${who.actor} for ${who.id}` : who.id;
    return `Signed in as ${as}${tenant} · ${count} ${count === 1 ? 'scope' : 'scopes'}`;
  }

  /**
   * Who a job runs for, as the console shows it (docs/api.md, "Callers: acting for someone"):
   * "<actor> for <subject>" when an actor acts for the caller, else the caller's id; '—' for none.
   */
  function whoText(caller) {
    if (typeof caller?.id !== 'string') return '—';
    const actor = caller.actor?.id;
    return typeof actor === 'string' ? `${actor} for ${caller.id}` : caller.id;
  }

  async function updateApprovalCount() {
    // A count, never the list: navigation stays cheap however many requests wait.
    const pending = await apiData('api/approvals/count');
    const count = typeof pending?.count === 'number' ? pending.count : 0;
    byId('approval-count').textContent = count > 0 ? `(${count})` : '';
  }

  // ---- Jobs ------------------------------------------------------------------------------

  function filterForm(params, capabilities) {
    const status = h(
      'select',
      { name: 'status', 'aria-label': 'status' },
      h('option', { value: '' }, 'any status'),
      JOB_STATUSES.map((value) =>
        h('option', { value, selected: params.get('status') === value }, value),
      ),
    );
    const capability = h(
      'select',
      { name: 'capability', 'aria-label': 'capability' },
      h('option', { value: '' }, 'any capability'),
      capabilities.map((name) =>
        h('option', { value: name, selected: params.get('capability') === name }, name),
      ),
    );
    const goal = h('input', {
      name: 'goal',
      type: 'search',
      placeholder: 'goal (exact)',
      'aria-label': 'goal',
      value: params.get('goal') ?? '',
    });
    return h(
      'form',
      {
        class: 'filters',
        onsubmit: (event) => {
          event.preventDefault();
          location.hash = `#/${query({
            status: status.value,
            capability: capability.value,
            goal: goal.value.trim(),
          })}`;
        },
      },
      status,
      capability,
      goal,
      h('button', { type: 'submit' }, 'Filter'),
      h('a', { href: '#/', class: 'clear' }, 'clear'),
    );
  }

  function stepDots(steps) {
    return h(
      'span',
      { class: 'dots' },
      steps.map((step) =>
        h('span', {
          class: `dot dot-${step.status}`,
          title: `${step.id} (${step.capability}): ${step.status}`,
        }),
      ),
      ` ${steps.length}`,
    );
  }

  function jobRow(job) {
    const steps = Array.isArray(job.steps) ? job.steps : [];
    return h(
      'tr',
      { 'data-job': job.id, 'data-status': job.status },
      h('td', { class: 'nowrap' }, time(job.createdAt)),
      h('td', {}, badge(job.status)),
      h(
        'td',
        {},
        jobLink(job.id, job.goal === '' ? job.id : job.goal),
        h('div', { class: 'muted small' }, job.id),
      ),
      h('td', {}, stepDots(steps)),
      h('td', {}, whoText(job.caller)),
      h(
        'td',
        { class: 'nowrap' },
        job.startedAt === undefined
          ? '—'
          : duration(
              job.startedAt,
              RUNNING.has(job.status) ? undefined : (job.completedAt ?? job.updatedAt),
            ),
      ),
    );
  }

  async function jobsView(current, params) {
    const capabilities = await apiData('api/capabilities');
    if (!isCurrent(current)) return;
    const names = [...new Set(capabilities.map((descriptor) => descriptor.name))].sort();
    const table = h('div', { id: 'jobs' }, h('p', { class: 'muted' }, 'Loading jobs…'));
    show(h('h1', {}, 'Jobs'), filterForm(params, names), table);
    const filter = {
      status: params.get('status') ?? undefined,
      capability: params.get('capability') ?? undefined,
      goal: params.get('goal') ?? undefined,
    };
    const load = async () => {
      const answer = await api(`api/jobs${query(filter)}`);
      if (!isCurrent(current)) return;
      if (!answer.ok) {
        table.replaceChildren(h('p', { class: 'error', role: 'alert' }, errorOf(answer)));
        return;
      }
      const jobs = answer.body;
      table.replaceChildren(
        jobs.length === 0
          ? h('p', { class: 'muted' }, 'No jobs match.')
          : h(
              'table',
              { class: 'list' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Created', 'Status', 'Goal', 'Steps', 'Caller', 'Duration'].map((name) =>
                    h('th', {}, name),
                  ),
                ),
              ),
              h('tbody', {}, jobs.map(jobRow)),
            ),
        h('p', { class: 'muted small' }, `Newest first; ${jobs.length} shown.`),
      );
      const running = jobs.some((job) => RUNNING.has(job.status));
      refreshLater(current, running ? FAST_MS : IDLE_MS, () => load().catch(failure));
    };
    await load();
  }

  // ---- One job as a timeline ---------------------------------------------------------------

  function verification(result) {
    if (result === undefined) return h('p', { class: 'muted' }, 'Verification unavailable.');
    if (result.ok === true)
      return h(
        'p',
        { class: 'verify ok', id: 'verification' },
        `Record verified: ${result.events} events, every digest matches.${
          Array.isArray(result.unproven)
            ? ` Written before its events carried every field, it cannot prove: ${result.unproven.join(', ')}.`
            : ''
        }`,
      );
    const where = [
      result.eventIndex === undefined ? '' : `event ${result.eventIndex}`,
      result.stepId === undefined ? '' : `step ${result.stepId}`,
    ]
      .filter(Boolean)
      .join(', ');
    return h(
      'p',
      { class: 'verify bad', id: 'verification', role: 'alert' },
      `Record NOT intact: ${result.reason}${where === '' ? '' : ` (${where})`}`,
    );
  }

  /** True when two JSON values are the same data (object keys in any order). */
  function sameJson(a, b) {
    if (a === b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
  }

  const isRecord = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

  /**
   * What an edit changes, field by field: `{ path, kind: 'changed' | 'added' | 'removed',
   * before?, after? }`, paths as `input.a.0.b` (docs/api.md, "Approve with edits").
   */
  function differences(before, after, path = 'input', found = []) {
    if (sameJson(before, after)) return found;
    const both =
      (isRecord(before) && isRecord(after)) || (Array.isArray(before) && Array.isArray(after));
    if (!both) {
      found.push({ path, kind: 'changed', before, after });
      return found;
    }
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    if (isRecord(before)) keys.sort();
    else keys.sort((a, b) => Number(a) - Number(b));
    for (const key of keys) {
      const at = `${path}.${key}`;
      if (!Object.hasOwn(after, key))
        found.push({ path: at, kind: 'removed', before: before[key] });
      else if (!Object.hasOwn(before, key))
        found.push({ path: at, kind: 'added', after: after[key] });
      else differences(before[key], after[key], at, found);
    }
    return found;
  }

  /** One change as a line of text: `input.amount: 7 → 70`, `+ input.note: "x"`, `− input.a: 1`. */
  function changeLine(change) {
    const shown = (value) => JSON.stringify(value);
    const text =
      change.kind === 'added'
        ? `+ ${change.path}: ${shown(change.after)}`
        : change.kind === 'removed'
          ? `\u2212 ${change.path}: ${shown(change.before)}`
          : `${change.path}: ${shown(change.before)} \u2192 ${shown(change.after)}`;
    return h('li', { class: `change change-${change.kind}`, 'data-change': change.kind }, text);
  }

  /**
   * The editor of an approval with edits: the proposed input as JSON text, and under it what the
   * edit changes, kept up to date as it is typed. `edited()` is `{ value }` for an edit that
   * parses and changes something, `{ error }` for text that is not JSON, else undefined.
   */
  function inputEditor(request, onChange) {
    const proposed = request.input;
    const text = h(
      'textarea',
      {
        class: 'input-editor',
        rows: 8,
        spellcheck: 'false',
        'aria-label': 'approved input',
      },
      JSON.stringify(proposed ?? null, null, 2),
    );
    const changes = h('div', { class: 'diff', 'aria-live': 'polite' });
    let state;
    const update = () => {
      let value;
      try {
        value = JSON.parse(text.value);
      } catch (error) {
        state = { error: `Not JSON: ${error.message}` };
        changes.replaceChildren(h('p', { class: 'error', role: 'alert' }, state.error));
        onChange();
        return;
      }
      const found = differences(proposed, value);
      state = found.length === 0 ? undefined : { value };
      if (found.length === 0)
        changes.replaceChildren(h('p', { class: 'muted' }, 'No change from the proposed input.'));
      else
        changes.replaceChildren(
          h('p', { class: 'small' }, 'Changes from the proposed input:'),
          h('ul', { class: 'changes', 'aria-label': 'changes' }, found.map(changeLine)),
        );
      onChange();
    };
    text.addEventListener('input', update);
    update();
    return { node: h('div', { class: 'editor' }, text, changes), edited: () => state };
  }

  /**
   * Approve or reject one pending request: the approver is whoever the token says. "Edit input"
   * opens an editor: the approval then carries the edited input, shown as changes first.
   */
  function approvalPanel(request, onDecided) {
    const comment = h('input', {
      type: 'text',
      maxlength: 500,
      placeholder: 'comment (optional)',
      'aria-label': 'comment',
    });
    const outcome = h('p', { class: 'outcome', role: 'status' });
    const buttons = [];
    let editor;
    const approveButton = h(
      'button',
      { type: 'button', class: 'approve', onclick: () => decide('approve') },
      'Approve',
    );
    /** The approve button says what it sends; an edit that is not JSON cannot be sent. */
    const showEdit = () => {
      const edited = editor?.edited();
      approveButton.textContent = edited?.value === undefined ? 'Approve' : 'Approve with edits';
      approveButton.disabled = edited?.error !== undefined;
    };
    const editSlot = h('div', { class: 'edit-slot' });
    const editButton = h(
      'button',
      {
        type: 'button',
        class: 'edit-input',
        onclick: () => {
          if (editor === undefined) {
            editor = inputEditor(request, showEdit);
            editSlot.replaceChildren(editor.node);
            editButton.textContent = 'Discard edits';
          } else {
            editor = undefined;
            editSlot.replaceChildren();
            editButton.textContent = 'Edit input';
          }
          showEdit();
        },
      },
      'Edit input',
    );
    const decide = async (decision) => {
      const edited = decision === 'approve' ? editor?.edited() : undefined;
      if (edited?.error !== undefined) return;
      for (const button of buttons) button.disabled = true;
      outcome.className = 'outcome';
      outcome.textContent = decision === 'approve' ? 'Approving…' : 'Rejecting…';
      const body = { decision, inputDigest: request.inputDigest };
      if (comment.value.trim() !== '') body.comment = comment.value.trim();
      if (edited?.value !== undefined) body.input = edited.value;
      const sent = await postDecision(
        `api/jobs/${encodeURIComponent(request.jobId)}/steps/${encodeURIComponent(request.stepId)}/approval`,
        body,
        outcome,
      );
      if (sent?.stopped) return;
      if (sent !== undefined) {
        outcome.textContent = `${decision === 'approve' ? (body.input === undefined ? 'Approved' : 'Approved with edits') : 'Rejected'}; the job is ${sent.status}.`;
        onDecided();
        return;
      }
      for (const button of buttons) button.disabled = false;
      showEdit();
    };
    buttons.push(
      approveButton,
      h('button', { type: 'button', class: 'reject', onclick: () => decide('reject') }, 'Reject'),
      editButton,
    );
    return h(
      'div',
      { class: 'approval', 'data-step': request.stepId },
      h('p', {}, 'Decide exactly the input with digest ', h('code', {}, request.inputDigest)),
      fields([
        ['Requested by', whoText(request.caller)],
        ['Reason', request.reason],
        // The effect the approval covers (docs/api.md, "Prepared effects"): this one only.
        ['Effect', request.effect === undefined ? undefined : block(request.effect, 'effect')],
        [
          'Effect digest',
          request.effectDigest === undefined ? undefined : h('code', {}, request.effectDigest),
        ],
        ['Requested', time(request.requestedAt)],
        ['Expires', time(request.expiresAt)],
      ]),
      h('div', { class: 'actions' }, comment, buttons),
      editSlot,
      outcome,
    );
  }

  /**
   * Posts a decision: `{ status }` of the job once decided; `{ stopped }` when the token is asked
   * for; otherwise undefined, with the refusal or the failure shown in `outcome`.
   */
  async function postDecision(path, body, outcome) {
    try {
      const answer = await api(path, { method: 'POST', body });
      if (answer.ok) return { status: answer.body?.status };
      outcome.className = 'outcome error';
      outcome.textContent = `Refused: ${errorOf(answer)}`;
    } catch (error) {
      if (error instanceof NeedsToken) return { stopped: true };
      outcome.className = 'outcome error';
      outcome.textContent = `Request failed: ${error.message}`;
    }
    return undefined;
  }

  /**
   * A plan request (docs/api.md, "Plan warrants"): every step with its preview outcome, its input
   * (result references as written) and its bounds, and one approval for the whole plan, bound to
   * its planDigest.
   */
  function planCard(request, onDecided) {
    const comment = h('input', {
      type: 'text',
      maxlength: 500,
      placeholder: 'comment (optional)',
      'aria-label': 'comment',
    });
    const outcome = h('p', { class: 'outcome', role: 'status' });
    const buttons = [];
    const decide = async (decision) => {
      for (const button of buttons) button.disabled = true;
      outcome.className = 'outcome';
      outcome.textContent = decision === 'approve' ? 'Approving the plan…' : 'Rejecting the plan…';
      const body = { decision, planDigest: request.planDigest };
      if (comment.value.trim() !== '') body.comment = comment.value.trim();
      const sent = await postDecision(
        `api/jobs/${encodeURIComponent(request.jobId)}/plan-approval`,
        body,
        outcome,
      );
      if (sent?.stopped) return;
      if (sent !== undefined) {
        outcome.textContent = `${decision === 'approve' ? 'Approved' : 'Rejected'}; the job is ${sent.status}.`;
        onDecided();
        return;
      }
      for (const button of buttons) button.disabled = false;
    };
    buttons.push(
      h(
        'button',
        { type: 'button', class: 'approve', onclick: () => decide('approve') },
        'Approve plan',
      ),
      h(
        'button',
        { type: 'button', class: 'reject', onclick: () => decide('reject') },
        'Reject plan',
      ),
    );
    return h(
      'div',
      { class: 'approval plan-approval', 'data-plan': request.planDigest },
      h(
        'p',
        {},
        `Decide the whole plan (${request.steps.length} steps) with digest `,
        h('code', {}, request.planDigest),
      ),
      fields([
        ['Goal', h('span', { class: 'goal' }, request.goal)],
        ['Requested by', request.caller?.id === undefined ? '—' : String(request.caller.id)],
        ['Requested', time(request.requestedAt)],
        ['Expires', time(request.expiresAt)],
      ]),
      h(
        'table',
        { class: 'list plan-steps' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Step', 'Capability', 'Preview', 'Input', 'Bounds'].map((name) => h('th', {}, name)),
          ),
        ),
        h(
          'tbody',
          {},
          request.steps.map((step) =>
            h(
              'tr',
              { 'data-step': step.id },
              h('td', {}, h('strong', {}, step.id)),
              h('td', {}, h('code', {}, `${step.capability}@${step.capabilityVersion}`)),
              h(
                'td',
                {},
                badge(step.outcome),
                step.reason === undefined ? '' : h('span', { class: 'reason' }, ` ${step.reason}`),
              ),
              h('td', {}, 'input' in step ? block(step.input, `input of ${step.id}`) : '—'),
              h(
                'td',
                {},
                step.bounds === undefined ? '—' : block(step.bounds, `bounds of ${step.id}`),
              ),
            ),
          ),
        ),
      ),
      h('div', { class: 'actions' }, comment, buttons),
      outcome,
    );
  }

  function stepItem(step, pending, onDecided) {
    const decision = step.decision;
    // The version the plan asked for, else the one that was authorized.
    const version = step.capabilityVersion ?? decision?.capabilityVersion;
    return h(
      'li',
      { class: `step step-${step.status}`, 'data-step': step.id },
      h(
        'div',
        { class: 'step-head' },
        h('strong', {}, step.id),
        ' ',
        h('code', {}, `${step.capability}${version === undefined ? '' : `@${version}`}`),
        ' ',
        badge(step.status),
      ),
      fields([
        ['Why', step.reason],
        [
          'Decision',
          decision === undefined
            ? 'never reached authorization'
            : h(
                'span',
                { class: 'decision' },
                badge(decision.outcome),
                decision.reason === undefined
                  ? ''
                  : h('span', { class: 'reason' }, ` ${decision.reason}`),
              ),
        ],
        ['Authorizer', decision?.authorizer],
        // A policy authorizer's determining policies (docs/api.md, "Policy as code: Cedar").
        [
          'Policies',
          Array.isArray(decision?.policies)
            ? decision.policies.length === 0
              ? 'none'
              : decision.policies.join(', ')
            : undefined,
        ],
        // The limit that denied the step (docs/api.md, "Limits"); its reason is the decision's.
        ['Limit', decision?.limit],
        // A step covered by a plan grant (docs/api.md, "Plan warrants").
        [
          'Approved',
          decision?.approval === undefined
            ? undefined
            : h(
                'span',
                { class: 'plan-grant' },
                `with the plan, by ${decision.approval.approver}: `,
                h('code', {}, decision.approval.planDigest),
              ),
        ],
        ['Decided', decision === undefined ? undefined : time(decision.decidedAt)],
        ['Input digest', decision === undefined ? undefined : h('code', {}, decision.inputDigest)],
        [
          'Effect digest',
          decision?.effectDigest === undefined ? undefined : h('code', {}, decision.effectDigest),
        ],
        // An outbound MCP tool's definition, as pinned (docs/api.md, "Pinned tools").
        [
          'Definition digest',
          decision?.definitionDigest === undefined
            ? undefined
            : h('code', {}, decision.definitionDigest),
        ],
        ['Started', step.startedAt === undefined ? undefined : time(step.startedAt)],
        [
          'Duration',
          step.startedAt === undefined
            ? undefined
            : duration(step.startedAt, step.status === 'running' ? undefined : step.completedAt),
        ],
        ['Input', block(step.input, 'input')],
        [
          'Resolved input',
          step.resolvedInput === undefined
            ? undefined
            : block(step.resolvedInput, 'resolved input'),
        ],
        // Approved with edits (docs/api.md, "Approve with edits"): what was proposed, what ran.
        [
          'Proposed input',
          'proposedInput' in step ? block(step.proposedInput, 'proposed input') : undefined,
        ],
        [
          'Approved input',
          'approvedInput' in step ? block(step.approvedInput, 'approved input') : undefined,
        ],
        // What the step was authorized to do (docs/api.md, "Prepared effects").
        ['Effect', step.effect === undefined ? undefined : block(step.effect, 'effect')],
        ['Result', 'result' in step ? block(step.result, 'result') : undefined],
        ['Error', step.error === undefined ? undefined : h('span', { class: 'error' }, step.error)],
      ]),
      pending === undefined ? '' : approvalPanel(pending, onDecided),
    );
  }

  function eventsTable(job) {
    return h(
      'table',
      { class: 'list events' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['#', 'Time', '+', 'Type', 'Data'].map((name) => h('th', {}, name)),
        ),
      ),
      h(
        'tbody',
        {},
        job.events.map((event, index) =>
          h(
            'tr',
            { 'data-event': event.type },
            h('td', {}, index),
            h('td', { class: 'nowrap' }, time(event.timestamp)),
            h('td', { class: 'nowrap muted' }, duration(job.createdAt, event.timestamp)),
            h('td', {}, h('code', {}, event.type)),
            h('td', {}, event.data === undefined ? '' : block(event.data, 'event data')),
          ),
        ),
      ),
    );
  }

  /**
   * Cancel a job that has not ended. The server decides who may (its submitter, or a caller the
   * cancel policy allows): a refusal is shown as the message it answers.
   */
  function cancelPanel(job, onCancelled) {
    const outcome = h('p', { class: 'outcome', role: 'status' });
    const button = h('button', { type: 'button', class: 'cancel' }, 'Cancel job');
    button.addEventListener('click', async () => {
      button.disabled = true;
      outcome.className = 'outcome';
      outcome.textContent = 'Cancelling…';
      try {
        const answer = await api(`api/jobs/${encodeURIComponent(job.id)}/cancel`, {
          method: 'POST',
          body: { reason: 'cancelled from the console' },
        });
        if (answer.ok) {
          outcome.textContent = `Cancel recorded; the job is ${answer.body?.status}.`;
          onCancelled();
          return;
        }
        outcome.className = 'outcome error';
        outcome.textContent = `Refused: ${errorOf(answer)}`;
      } catch (error) {
        if (error instanceof NeedsToken) return;
        outcome.className = 'outcome error';
        outcome.textContent = `Request failed: ${error.message}`;
      }
      button.disabled = false;
    });
    return h('div', { class: 'cancel-panel' }, button, outcome);
  }

  async function jobView(current, id) {
    const encoded = encodeURIComponent(id);
    const [answer, verified, approvals] = await Promise.all([
      api(`api/jobs/${encoded}`),
      api(`api/jobs/${encoded}/verify`),
      apiData(`api/approvals${query({ jobId: id })}`),
    ]);
    if (!isCurrent(current)) return;
    if (!answer.ok) {
      show(
        h('p', { class: 'error', role: 'alert' }, errorOf(answer)),
        h('a', { href: '#/' }, 'All jobs'),
      );
      return;
    }
    const job = answer.body;
    const pending = new Map(
      approvals
        .filter((request) => request.kind !== 'plan')
        .map((request) => [request.stepId, request]),
    );
    const planned = approvals.find((request) => request.kind === 'plan');
    show(
      h('p', {}, h('a', { href: '#/' }, '← all jobs')),
      h('h1', {}, job.goal === '' ? job.id : job.goal, ' ', badge(job.status)),
      CANCELLABLE.has(job.status) ? cancelPanel(job, render) : undefined,
      verification(verified.ok ? verified.body : undefined),
      fields([
        ['Job', h('code', {}, job.id)],
        ['Acting', job.caller?.actor === undefined ? undefined : whoText(job.caller)],
        ['Caller', job.caller === undefined ? undefined : block(job.caller, 'caller')],
        ['Plan', job.planId],
        // Absent on a 1.0 job's record (docs/api.md, "Plan version 2.0").
        ['Plan version', job.planVersion ?? '1.0'],
        ['Created', time(job.createdAt)],
        ['Started', job.startedAt === undefined ? undefined : time(job.startedAt)],
        ['Completed', job.completedAt === undefined ? undefined : time(job.completedAt)],
        [
          'Duration',
          job.startedAt === undefined
            ? undefined
            : duration(
                job.startedAt,
                RUNNING.has(job.status) ? undefined : (job.completedAt ?? job.updatedAt),
              ),
        ],
        ['Error', job.error === undefined ? undefined : h('span', { class: 'error' }, job.error)],
        ['Result', 'result' in job ? block(job.result, 'job result') : undefined],
      ]),
      planned === undefined ? undefined : [h('h2', {}, 'Plan approval'), planCard(planned, render)],
      h('h2', {}, 'Steps'),
      h(
        'ol',
        { class: 'timeline' },
        job.steps.map((step) => stepItem(step, pending.get(step.id), render)),
      ),
      h('h2', {}, `Events (${job.events.length})`),
      eventsTable(job),
    );
    if (RUNNING.has(job.status)) refreshLater(current, FAST_MS, render);
  }

  // ---- Approvals and capabilities ------------------------------------------------------------

  async function approvalsView(current) {
    const [pending, waiting] = await Promise.all([
      apiData('api/approvals'),
      apiData('api/jobs?status=awaiting_approval&limit=1000'),
    ]);
    if (!isCurrent(current)) return;
    // Plan requests (docs/api.md, "Plan warrants") first, each as its plan card; then the steps.
    const plans = pending.filter((request) => request.kind === 'plan');
    const requests = pending.filter((request) => request.kind !== 'plan');
    // The goal of each request's job: what the approver is asked to let happen, and why.
    const goals = new Map(waiting.map((job) => [job.id, job.goal]));
    show(
      h('h1', {}, 'Pending approvals'),
      h(
        'p',
        { class: 'muted small' },
        h('a', { href: '#/notifications' }, 'Notifications not delivered'),
      ),
      plans.length === 0
        ? undefined
        : h(
            'ul',
            { class: 'cards plans' },
            plans.map((request) =>
              h(
                'li',
                { class: 'card plan-card', 'data-job': request.jobId },
                h(
                  'div',
                  { class: 'step-head' },
                  'plan of job ',
                  jobLink(request.jobId, request.jobId),
                ),
                planCard(request, () => {
                  location.hash = `#/jobs/${encodeURIComponent(request.jobId)}`;
                }),
              ),
            ),
          ),
      requests.length === 0
        ? plans.length === 0
          ? h('p', { class: 'muted' }, 'Nothing awaits approval.')
          : undefined
        : h(
            'ul',
            { class: 'cards' },
            requests.map((request) =>
              h(
                'li',
                { class: 'card', 'data-job': request.jobId },
                h(
                  'div',
                  { class: 'step-head' },
                  h('code', {}, `${request.capability}@${request.capabilityVersion}`),
                  ' ',
                  badge(request.risk, `risk-${request.risk}`),
                  ' step ',
                  h('strong', {}, request.stepId),
                  ' of job ',
                  jobLink(request.jobId, request.jobId),
                ),
                fields([
                  ['Goal', h('span', { class: 'goal' }, goals.get(request.jobId) ?? '—')],
                  ['Input', block(request.input, 'input')],
                ]),
                approvalPanel(request, () => {
                  location.hash = `#/jobs/${encodeURIComponent(request.jobId)}`;
                }),
              ),
            ),
          ),
    );
    refreshLater(current, IDLE_MS * 3, function again() {
      // Never throw away a comment or an edit being written: try again later.
      const typing = [...view.querySelectorAll('input, textarea')].some(
        (input) => input.value !== '' || input === document.activeElement,
      );
      if (typing) refreshLater(current, IDLE_MS * 3, again);
      else render();
    });
  }

  /**
   * Limits (docs/api.md, "Limits"): the runtime's limits, and the counters the signed-in caller
   * may see (its own, its tenant's and the global ones; every counter of its tenant for an
   * auditor), each with what was taken in its window ending now.
   */
  async function limitsView(current) {
    const answer = await api('api/limits');
    if (!isCurrent(current)) return;
    if (!answer.ok) throw new Error(errorOf(answer));
    const { limits, counters } = answer.body;
    const windowText = (ms) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`);
    const table = (id, names, rows) =>
      h(
        'table',
        { class: 'list', id },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            names.map((name) => h('th', {}, name)),
          ),
        ),
        h('tbody', {}, rows),
      );
    show(
      h('h1', {}, 'Limits'),
      limits.length === 0
        ? h('p', { class: 'muted' }, 'No limits are configured (--limits).')
        : table(
            'limits',
            ['Limit', 'Per', 'Matches', 'At most', 'In'],
            limits.map((limit) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, limit.name)),
                h('td', {}, limit.per),
                h(
                  'td',
                  {},
                  [limit.match.capability, limit.match.risk].filter(Boolean).join(', ') ||
                    'every step',
                ),
                h('td', {}, `${limit.max}${limit.cost ? ' (cost)' : ''}`),
                h('td', {}, windowText(limit.windowMs)),
              ),
            ),
          ),
      counters.length === 0
        ? h('p', { class: 'muted' }, 'Nothing counted in the current windows.')
        : table(
            'limit-counters',
            ['Limit', 'Whose', 'Used', 'Window'],
            counters.map((counter) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, counter.limit)),
                h(
                  'td',
                  {},
                  counter.per === 'global'
                    ? 'everyone'
                    : [counter.tenant, counter.caller ?? counter.actor]
                        .filter(Boolean)
                        .join(' / ') || 'no tenant',
                ),
                h(
                  'td',
                  {},
                  counter.max === undefined
                    ? String(counter.used)
                    : `${counter.used} / ${counter.max}`,
                ),
                h('td', {}, windowText(counter.windowMs)),
              ),
            ),
          ),
    );
    refreshLater(current, IDLE_MS, render);
  }

  /**
   * Notifications not delivered (docs/api.md, "HTTP: notifications"): pending, failed or
   * dropped, oldest first, the first 200. Only an auditor (`warrant:audit`) may see them; anyone
   * else is told so.
   */
  async function notificationsView(current) {
    const answer = await api('api/notifications?limit=200');
    if (!isCurrent(current)) return;
    if (answer.status === 403) {
      show(
        h('h1', {}, 'Notifications'),
        h('p', { class: 'muted' }, 'Shown to a caller with the scope warrant:audit.'),
      );
      return;
    }
    if (!answer.ok) throw new Error(errorOf(answer));
    const rows = answer.body;
    show(
      h('h1', {}, 'Notifications'),
      h('p', { class: 'muted' }, 'Not delivered yet; delivered ones leave the list.'),
      rows.length === 0
        ? h('p', { class: 'muted' }, 'No notifications pending or failed.')
        : h(
            'table',
            { class: 'list', id: 'notifications' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Status', 'Event', 'Job', 'Attempts', 'Next attempt', 'Destination', 'Error'].map(
                  (name) => h('th', {}, name),
                ),
              ),
            ),
            h(
              'tbody',
              {},
              rows.map((row) =>
                h(
                  'tr',
                  { 'data-status': row.status },
                  h('td', {}, badge(row.status)),
                  h('td', {}, h('code', {}, row.type)),
                  h('td', {}, jobLink(row.jobId, row.jobId)),
                  h('td', {}, String(row.attempts)),
                  h('td', { class: 'nowrap' }, row.status === 'pending' ? time(row.nextAt) : '—'),
                  h('td', {}, h('code', {}, row.destination)),
                  h('td', {}, row.error ?? ''),
                ),
              ),
            ),
          ),
    );
    refreshLater(current, IDLE_MS, render);
  }

  function schemaTable(schema) {
    const entries = Object.entries(schema ?? {});
    if (entries.length === 0) return h('span', { class: 'muted' }, 'no declared fields');
    return h(
      'table',
      { class: 'list schema' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Field', 'Type', 'Required', 'Details'].map((n) => h('th', {}, n)),
        ),
      ),
      h(
        'tbody',
        {},
        entries.map(([name, field]) => {
          const { type, required, description, ...rest } = field ?? {};
          return h(
            'tr',
            {},
            h('td', {}, h('code', {}, name)),
            h('td', {}, type === undefined ? '—' : String(type)),
            h('td', {}, required === true ? 'yes' : 'no'),
            h(
              'td',
              {},
              description === undefined ? '' : String(description),
              Object.keys(rest).length === 0 ? '' : block(rest, 'field details'),
            ),
          );
        }),
      ),
    );
  }

  async function capabilitiesView(current) {
    const descriptors = await apiData('api/capabilities');
    if (!isCurrent(current)) return;
    show(
      h('h1', {}, 'Capabilities'),
      h('p', { class: 'muted' }, 'What is registered; the authorizer decides what runs.'),
      h(
        'ul',
        { class: 'cards' },
        descriptors.map((descriptor) =>
          h(
            'li',
            { class: 'card', 'data-capability': descriptor.name },
            h(
              'div',
              { class: 'step-head' },
              h('strong', {}, descriptor.name),
              ` ${descriptor.version} `,
              badge(descriptor.risk, `risk-${descriptor.risk}`),
            ),
            h('p', {}, descriptor.description),
            // An outbound MCP tool: the digest of its definition as last listed.
            descriptor.definitionDigest === undefined
              ? ''
              : h(
                  'p',
                  { class: 'muted' },
                  'Definition digest ',
                  h('code', {}, descriptor.definitionDigest),
                ),
            schemaTable(descriptor.inputSchema),
            descriptor.inputJsonSchema === undefined
              ? ''
              : h(
                  'details',
                  { class: 'json-schema', open: true },
                  h('summary', {}, 'Input JSON Schema (what is checked)'),
                  block(descriptor.inputJsonSchema, 'input JSON Schema'),
                ),
          ),
        ),
      ),
    );
  }

  // ---- Start ---------------------------------------------------------------------------------

  byId('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = byId('token-input').value.trim();
    if (value === '') return;
    token.set(value);
    byId('token-input').value = '';
    byId('token-form').hidden = true;
    render();
  });
  byId('forget-token').addEventListener('click', () => {
    token.clear();
    render();
  });
  window.addEventListener('hashchange', render);
  render();
})();
