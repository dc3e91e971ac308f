// What every child process of the tests inherits besides what a test gives it: PATH, and the
// variables of a shifted clock (libfaketime's LD_PRELOAD and FAKETIME*), so that a suite run under
// `faketime` to check it does not depend on today's date moves its children's clock too.
export function inheritedEnv(): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (name === 'PATH' || name === 'LD_PRELOAD' || name.startsWith('FAKETIME'))) kept[name] = value;
  }
  return kept;
}
