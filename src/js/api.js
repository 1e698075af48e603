// The object load() resolves to. Each family lives in its own module and adds its methods here.
import { absolute } from './absolute.js';
import { analysis } from './analysis.js';
import { attention } from './attention.js';
import { relative } from './relative.js';
import { rope } from './rope.js';
import { toy } from './toy.js';
import { guarded } from './validate.js';
import { version } from './version.js';

export class Posenc {
  constructor(mod, backend) {
    Object.defineProperty(this, '_mod', { value: mod });
    this.backend = backend;
    this.version = version;
    this.simdArch = mod._simdArch();
    // bound, so that `const { sinusoidal } = pe` works too
    for (const [name, fn] of Object.entries(methods)) Object.defineProperty(this, name, { value: fn.bind(this) });
    Object.freeze(this);
  }
}

// Every method throws posenc's errors only (validate.js guarded).
const methods = Object.fromEntries(
  Object.entries({ ...absolute, ...rope, ...relative, ...attention, ...analysis, ...toy }).map(([name, fn]) => [name, guarded(name, fn)]),
);
Object.assign(Posenc.prototype, methods);
