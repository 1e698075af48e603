// The object load() resolves to. Each family lives in its own module and adds its methods here.
import { absolute } from './absolute.js';
import { analysis } from './analysis.js';
import { attention } from './attention.js';
import { relative } from './relative.js';
import { rope } from './rope.js';
import { guarded } from './validate.js';
import { version } from './version.js';

// Every method throws posenc's errors only (validate.js guarded).
export const guardAll = (table) => Object.fromEntries(Object.entries(table).map(([name, fn]) => [name, guarded(name, fn)]));
const methods = guardAll({ ...absolute, ...rope, ...relative, ...attention, ...analysis });
export const methodNames = Object.keys(methods);

export class Posenc {
  // `lab`: the lab module and its methods, for the object posenc/lab's loadLab() resolves to.
  constructor(mod, backend, lab) {
    Object.defineProperty(this, '_mod', { value: mod });
    if (lab) Object.defineProperty(this, '_lab', { value: lab.mod });
    this.backend = backend;
    this.version = version;
    this.simdArch = mod._simdArch();
    // bound, so that `const { sinusoidal } = pe` works too
    for (const [name, fn] of Object.entries({ ...methods, ...lab?.methods }))
      Object.defineProperty(this, name, { value: fn.bind(this), enumerable: !(name in methods) });
    Object.freeze(this);
  }
}

Object.assign(Posenc.prototype, methods);
