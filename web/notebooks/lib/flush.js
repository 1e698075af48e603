// Waiting until the Deno kernel has published a cell's outputs, so that none is lost or filed under a
// later cell.
//
// Deno's kernel (2.x) evaluates cells on one thread and talks to Jupyter on another: Deno.jupyter.display
// only queues a message, which the kernel thread publishes on its iopub socket when it gets to it. It may
// announce that the cell is finished first, and the front end (nbconvert, for one) then drops the
// outputs or shows them under the next cell. A fixed pause hides this only while the machine is idle.
//
// Here the notebook listens to the kernel itself: it subscribes to the kernel's iopub socket like any
// front end (the connection file is the kernel's `--conn` argument), and after the outputs it sends a
// marker (a 'status: busy' message, which front ends take as "still working", tagged in its metadata).
// Messages are published in order, and the kernel writes each one to its subscribers in the order they
// subscribed, the front end first; so once the marker comes back here, the front end has every output
// sent before it. Without a kernel connection to read (another kernel, another OS), it falls back to a
// pause.
const FALLBACK_MS = 50;
const RETRY_MS = 250; // a marker sent before the subscription was registered is re-sent
const GIVE_UP_MS = 20000;

const enc = new TextEncoder();
const dec = new TextDecoder();

function frame(body, { more = false, command = false } = {}) {
  const long = body.length > 255;
  const out = new Uint8Array((long ? 9 : 2) + body.length);
  out[0] = (more ? 1 : 0) | (long ? 2 : 0) | (command ? 4 : 0);
  if (long) new DataView(out.buffer).setBigUint64(1, BigInt(body.length));
  else out[1] = body.length;
  out.set(body, long ? 9 : 2);
  return out;
}

// A byte reader over a connection.
function reader(conn) {
  let buf = new Uint8Array(0);
  return async (n) => {
    while (buf.length < n) {
      const chunk = new Uint8Array(Math.max(65536, n - buf.length));
      const got = await conn.read(chunk);
      if (got === null) throw new Error('iopub connection closed');
      const next = new Uint8Array(buf.length + got);
      next.set(buf);
      next.set(chunk.subarray(0, got), buf.length);
      buf = next;
    }
    const out = buf.slice(0, n);
    buf = buf.subarray(n);
    return out;
  };
}

// A ZMTP 3.0 SUB socket (NULL mechanism) subscribed to everything the kernel publishes. onMessage gets
// each message's metadata (parsed JSON).
async function subscribe({ ip, iopub_port: port, transport = 'tcp' }, onMessage) {
  const conn = transport === 'ipc' ? await Deno.connect({ transport: 'unix', path: `${ip}-${port}` }) : await Deno.connect({ hostname: ip, port });
  const read = reader(conn);
  const write = async (bytes) => {
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  };
  const greeting = new Uint8Array(64);
  greeting.set([0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0]);
  greeting.set(enc.encode('NULL'), 12);
  await write(greeting);
  await read(64);
  const ready = [5, ...enc.encode('READY'), 11, ...enc.encode('Socket-Type'), 0, 0, 0, 3, ...enc.encode('SUB')];
  await write(frame(Uint8Array.from(ready), { command: true }));
  const readFrame = async () => {
    const [flags] = await read(1);
    const size = flags & 2 ? Number(new DataView((await read(8)).buffer).getBigUint64(0)) : (await read(1))[0];
    return { flags, body: await read(size) };
  };
  await readFrame(); // the kernel's READY
  await write(frame(Uint8Array.of(1))); // subscribe to every topic
  (async () => {
    try {
      for (;;) {
        const parts = [];
        for (;;) {
          const { flags, body } = await readFrame();
          if (!(flags & 4)) parts.push(body);
          if (!(flags & 1)) break;
        }
        // [topic..., '<IDS|MSG>', signature, header, parent header, metadata, content, buffers...]
        const at = parts.findIndex((p) => dec.decode(p) === '<IDS|MSG>');
        if (at >= 0 && parts[at + 4]) onMessage(JSON.parse(dec.decode(parts[at + 4])));
      }
    } catch {
      // the kernel is shutting down
    }
  })();
  return conn;
}

// The kernel's connection file, from its command line (deno jupyter --kernel --conn FILE).
function connectionInfo() {
  try {
    const argv = Deno.readTextFileSync('/proc/self/cmdline').split('\0');
    const at = argv.indexOf('--conn');
    return at >= 0 ? JSON.parse(Deno.readTextFileSync(argv[at + 1])) : null;
  } catch {
    return null;
  }
}

// How each flush ended in this kernel: the notebook test reads it at the end of a run and requires every
// flush to have been confirmed by the kernel, none to have fallen back to the pause.
export const flushStats = { confirmed: 0, paused: 0 };

let listening; // Promise of the subscription, or of null when there is none
const waiting = new Map(); // marker id -> resolve
let counter = 0;

function listen() {
  listening ??= (async () => {
    const info = connectionInfo();
    if (!info || typeof Deno.jupyter?.broadcast !== 'function') return null;
    try {
      return await subscribe(info, (metadata) => {
        const id = metadata?.posenc_flush;
        if (id !== undefined) for (const [key, resolve] of waiting) if (key <= id) (waiting.delete(key), resolve(true));
      });
    } catch {
      return null;
    }
  })();
  return listening;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Resolves once everything this cell has displayed so far has reached the front end (or, without a
// subscription, after a short pause). Returns 'confirmed' or 'paused'.
export async function flush() {
  if (!(await listen())) {
    await sleep(FALLBACK_MS);
    flushStats.paused++;
    return 'paused';
  }
  const first = ++counter;
  const back = new Promise((resolve) => waiting.set(first, resolve));
  const started = Date.now();
  for (let id = first; ; id = ++counter) {
    // a marker: 'busy' while the cell is running anyway; the id rides in the metadata
    await Deno.jupyter.broadcast('status', { execution_state: 'busy' }, { metadata: { posenc_flush: id } });
    const done = await Promise.race([back, sleep(RETRY_MS).then(() => false)]);
    if (done) {
      flushStats.confirmed++;
      return 'confirmed';
    }
    if (Date.now() - started > GIVE_UP_MS) {
      waiting.delete(first);
      flushStats.paused++;
      return 'paused';
    }
  }
}
