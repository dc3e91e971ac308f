// The platform's version, as package.json gives it: in the start log of every process.
import pkg from '../../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;
