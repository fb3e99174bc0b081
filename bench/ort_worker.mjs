// ONNX Runtime side of chipfit-bench-ort: a long-lived process that loads one model at a time and
// times session.run on request, so session creation and Node start-up stay out of the timings.
// Protocol: one JSON command per stdin line, one JSON reply per stdout line (errors: {"error": ...}).
//   {"cmd":"load","model":PATH,"input":NAME,"shape":[..],"threads":N,"data":"FILE.npy"}  -> {"ok":true,"create_ms":x}
//   {"cmd":"run","iterations":K}                         -> {"times_ms":[...]}  (hrtime around each await run)
//   {"cmd":"outputs","dir":DIR}                          -> {"files":{"<output>":"DIR/<n>.npy"}}  (one run)
// Usage: NODE_PATH=.cache/peer/node_modules node bench/ort_worker.mjs
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// numpy descr <-> ORT tensor type and the typed array that holds it.
const kDescr = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array],
  '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array],
};

function parseNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 10 || bytes[0] !== 0x93 || bytes.toString('latin1', 1, 6) !== 'NUMPY') {
    throw new Error(`${file}: not a .npy file`);
  }
  const version = bytes[6];
  const headerStart = version === 1 ? 10 : 12;
  const headerLength = version === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = header.match(/'descr'\s*:\s*'([^']*)'/)?.[1];
  if (/'fortran_order'\s*:\s*True/.test(header)) throw new Error(`${file}: Fortran order unsupported`);
  const dimsText = header.match(/'shape'\s*:\s*\(([^)]*)\)/)?.[1] ?? '';
  const dims = dimsText.split(',').map((d) => d.trim()).filter((d) => d.length > 0).map(Number);
  const entry = kDescr[descr];
  if (!entry) throw new Error(`${file}: dtype ${descr} unsupported`);
  const [type, ArrayType] = entry;
  const payload = bytes.subarray(headerStart + headerLength);
  // Copy into a fresh, aligned buffer: the file buffer's offset need not be a multiple of the element size.
  const copy = new Uint8Array(payload.length);
  copy.set(payload);
  return { type, dims, data: new ArrayType(copy.buffer) };
}

function writeNpy(file, tensor) {
  const descr = Object.keys(kDescr).find((d) => kDescr[d][0] === tensor.type);
  if (!descr) throw new Error(`output type ${tensor.type} cannot be written as .npy`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Version 1.0: magic(6) + version(2) + length(2) + header, padded with spaces to 64 bytes, '\n' last.
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  prefix[0] = 0x93;
  prefix.write('NUMPY', 1, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

let ort = null;
let session = null;
let feeds = null;

async function load(cmd) {
  ort ??= require('onnxruntime-node');
  const threads = Number.isInteger(cmd.threads) && cmd.threads > 0 ? cmd.threads : 0;
  const options = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  };
  session = null;
  const start = process.hrtime.bigint();
  session = await ort.InferenceSession.create(cmd.model, options);
  const createMs = Number(process.hrtime.bigint() - start) / 1e6;
  let tensor;
  if (cmd.data) {
    const npy = parseNpy(cmd.data);
    if (cmd.shape && cmd.shape.join('x') !== npy.dims.join('x')) {
      throw new Error(`${cmd.data}: shape ${npy.dims.join('x')}, expected ${cmd.shape.join('x')}`);
    }
    tensor = new ort.Tensor(npy.type, npy.data, npy.dims);
  } else {
    // No data file: zeros of the given shape (chipfit-bench-ort always passes its seeded input).
    const count = cmd.shape.reduce((a, b) => a * b, 1);
    tensor = new ort.Tensor('float32', new Float32Array(count), cmd.shape);
  }
  feeds = { [cmd.input]: tensor };
  return { ok: true, create_ms: createMs };
}

async function run(cmd) {
  if (!session) throw new Error('run before load');
  const iterations = Number.isInteger(cmd.iterations) && cmd.iterations > 0 ? cmd.iterations : 1;
  const times = new Array(iterations);
  for (let i = 0; i < iterations; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times[i] = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return { times_ms: times };
}

async function outputs(cmd) {
  if (!session) throw new Error('outputs before load');
  const results = await session.run(feeds);
  fs.mkdirSync(cmd.dir, { recursive: true });
  const files = {};
  session.outputNames.forEach((name, i) => {
    const file = path.join(cmd.dir, `output_${i}.npy`);
    writeNpy(file, results[name]);
    files[name] = file;
  });
  return { files };
}

const handlers = { load, run, outputs };

function reply(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

// Commands are handled one at a time, in order: a run never overlaps another.
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  try {
    const cmd = JSON.parse(line);
    const handler = handlers[cmd.cmd];
    if (!handler) throw new Error(`unknown command '${cmd.cmd}'`);
    reply(await handler(cmd));
  } catch (error) {
    reply({ error: String(error?.message ?? error) });
  }
}
