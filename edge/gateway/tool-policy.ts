// A server's tool policy as the proxy applies it: a tool passes when the allow list is empty or
// names it, and the deny list does not. A name ending with `*` stands for every tool it prefixes.
import type { ToolPolicyConfig } from './config.ts';

export interface ToolPolicy {
  allows(tool: string): boolean;
  readonly config: ToolPolicyConfig;
}

interface Names {
  exact: Set<string>;
  prefixes: string[];
}

function namesOf(list: string[]): Names {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const name of list) {
    if (name.endsWith('*')) prefixes.push(name.slice(0, -1));
    else exact.add(name);
  }
  return { exact, prefixes };
}

function matches(names: Names, tool: string): boolean {
  if (names.exact.has(tool)) return true;
  for (const prefix of names.prefixes) if (tool.startsWith(prefix)) return true;
  return false;
}

/** The policy, or undefined when it lets every tool through (the proxy then parses nothing). */
export function compileToolPolicy(config: ToolPolicyConfig | undefined): ToolPolicy | undefined {
  if (!config || (config.allow.length === 0 && config.deny.length === 0)) return undefined;
  const allow = config.allow.length > 0 ? namesOf(config.allow) : undefined;
  const deny = namesOf(config.deny);
  return {
    config,
    allows: (tool) => (allow === undefined || matches(allow, tool)) && !matches(deny, tool),
  };
}
