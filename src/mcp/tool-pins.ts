/**
 * Pinned tools (docs/api.md, "Pinned tools"): the digest of a downstream tool's definition, and
 * what a downstream server's tools are pinned to. A tool runs only while the definition its
 * server lists matches its pin: the pin a pins file gives (`null`: the file pins no such tool, so
 * it never runs), else the first definition this process saw. Each listing (at connection, and
 * after `notifications/tools/list_changed`) replaces what the server lists; nothing unpins.
 */
import { ErrorCode } from '../errors/error-codes.js';
import { createError } from '../errors/warrant-error.js';
import { digestJson } from '../json/canonical-json.js';

/** What a definition digest covers, in this order of importance (docs/decisions.md, "Pinned tools"). */
export const DEFINITION_FIELDS = [
  'name',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
] as const;

/** A digest as the pins file and the record hold it. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/**
 * `sha256:<hex>` of the RFC 8785 JSON of the tool's `name`, `description`, `inputSchema`,
 * `outputSchema` and `annotations`, as listed by the server; an absent field is left out (not
 * `null`), every other field of the tool (`title`, `icons`, `_meta`, ...) too.
 */
export function toolDefinitionDigest(tool: Readonly<Record<string, unknown>>): string {
  const definition: Record<string, unknown> = {};
  for (const field of DEFINITION_FIELDS) {
    if (tool[field] !== undefined) definition[field] = tool[field];
  }
  // A listing is JSON as received; the round trip drops what JSON cannot hold (an undefined).
  return digestJson(JSON.parse(JSON.stringify(definition)) as unknown);
}

/** The pin a capability's tool must match: a digest, `null` (not pinned), or the first seen. */
export type ToolPin = string | null | undefined;

/** A capability of this server, as its changes are reported. */
export interface McpToolState {
  /** The Warrant capability's name. */
  readonly capability: string;
  readonly tool: string;
  /** The digest of the definition the server lists now; undefined when it lists no such tool. */
  readonly definitionDigest: string | undefined;
  /** Why its steps fail (a TOOL_DEFINITION_CHANGED message); undefined when it may run. */
  readonly refused: string | undefined;
  /** The listing that found it so: at connection, or after `notifications/tools/list_changed`. */
  readonly cause: 'connected' | 'list_changed';
}

type Listener = (state: McpToolState) => void;

const listeners = new Set<Listener>();

/**
 * Calls `listener` with the new state of each capability whose tool's state changed (at the
 * first listing, every capability's): what the program prints on stderr and tests wait for.
 * Returns the function that stops it. A listener that throws is ignored.
 */
export function onMcpToolState(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

interface Watch {
  readonly capability: string;
  readonly tool: string;
  readonly pin: ToolPin;
  /** The last state reported, as `digest|refusal`. */
  reported: string | undefined;
}

/** The pins and the last listing of one downstream server, for the life of the process. */
export class ServerDefinitions {
  readonly #label: string;
  /** The first definition seen of each tool: its pin when no pins file pins it. */
  readonly #first = new Map<string, string>();
  /** The last listing; undefined before the first, or when one failed after a change. */
  #listed: ReadonlyMap<string, string> | undefined;
  /** Why the last listing failed, if it did. */
  #unlisted: string | undefined;
  readonly #watches: Watch[] = [];

  /** `label`: the server as messages name it. */
  constructor(label: string) {
    this.#label = label;
  }

  /** Reports the state of `capability`, a caller of `tool` pinned to `pin`, at each listing. */
  watch(capability: string, tool: string, pin: ToolPin): void {
    this.#watches.push({ capability, tool, pin, reported: undefined });
  }

  /** The digest of `tool` as last listed. */
  seen(tool: string): string | undefined {
    return this.#listed?.get(tool);
  }

  /** A new listing of the server's tools (name → definition digest). */
  listed(tools: ReadonlyMap<string, string>, cause: McpToolState['cause']): void {
    for (const [tool, digest] of tools) if (!this.#first.has(tool)) this.#first.set(tool, digest);
    this.#listed = tools;
    this.#unlisted = undefined;
    this.#report(cause);
  }

  /** A listing after a change failed: every tool is refused until the next one. */
  unlisted(reason: string): void {
    this.#listed = undefined;
    this.#unlisted = reason;
    this.#report('list_changed');
  }

  /** Why a step of `tool` pinned to `pin` must not run now; undefined when it may. */
  refusal(tool: string, pin: ToolPin): string | undefined {
    const what = `MCP tool ${JSON.stringify(tool)} of ${this.#label}`;
    const code = ErrorCode.TOOL_DEFINITION_CHANGED;
    if (this.#listed === undefined) {
      return `${code}: the tools of ${this.#label} could not be listed after they changed (${this.#unlisted ?? 'not listed yet'})`;
    }
    const digest = this.#listed.get(tool);
    const pinned = pin === undefined ? this.#first.get(tool) : pin;
    if (digest === undefined) {
      return `${code}: ${what} is no longer listed by the server${pinned == null ? '' : ` (pinned ${pinned})`}`;
    }
    if (pinned === null)
      return `${code}: ${what} is not in the pins file (listed ${digest}); pin it with "warrant mcp pin"`;
    if (digest !== pinned)
      return `${code}: ${what} changed since it was pinned (pinned ${pinned}, listed ${digest})`;
    return undefined;
  }

  /**
   * The digest a step of `tool` pinned to `pin` runs under.
   * @throws Error (TOOL_DEFINITION_CHANGED) naming the refusal.
   */
  pinned(tool: string, pin: ToolPin): string {
    const refused = this.refusal(tool, pin);
    if (refused !== undefined) throw createError(Error, ErrorCode.TOOL_DEFINITION_CHANGED, refused);
    return this.#listed?.get(tool) as string;
  }

  #report(cause: McpToolState['cause']): void {
    for (const watch of this.#watches) {
      const definitionDigest = this.seen(watch.tool);
      const refused = this.refusal(watch.tool, watch.pin);
      const key = `${definitionDigest ?? ''}|${refused ?? ''}`;
      if (key === watch.reported) continue;
      watch.reported = key;
      const state = {
        capability: watch.capability,
        tool: watch.tool,
        definitionDigest,
        refused,
        cause,
      };
      for (const listener of listeners) {
        try {
          listener(state);
        } catch {
          // A listener's fault changes nothing of the pins.
        }
      }
    }
  }
}
