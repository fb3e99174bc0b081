// ONNX Runtime side of chipfit-bench-ort: a long-lived process that loads one model at a time and
// times session.run on request, so session creation and Node start-up stay out of the timings.
// Protocol: one JSON command per stdin line, one JSON reply per stdout line (errors: {"error": ...}).
//   {"cmd":"load","model":PATH,"inputs":{"<input>":"FILE.npy",...},"threads":N}  -> {"ok":true,"create_ms":x}
//     every model input must have its .npy: its dtype and shape are fed as they are (int64 ids and masks too)
//   {"cmd":"run","iterations":K}                         -> {"times_ms":[...]}  (hrtime around each await run)
//   {"cmd":"outputs","dir":DIR}                          -> {"files":{"<output>":"DIR/<n>.npy"}}  (one run)
// Usage: NODE_PATH=.cache/peer/node_modules node bench/ort_worker.mjs
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// numpy descr <-> ORT tensor type and the typed array that holds it (float16 as raw bits, as ORT takes it).
const kDescr = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  '<f2': ['float16', Uint16Array],
  '<i2': ['int16', Int16Array],
  '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array],
  '<u4': ['uint32', Uint32Array],
  '<i8': ['int64', BigInt64Array],
  '<u8': ['uint64', BigUint64Array],
  '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array],
  '|b1': ['bool', Uint8Array],
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
  // The very tensors chipfit runs on: no default, no conversion, so both sides see the same bytes.
  const files = cmd.inputs ?? {};
  const missing = session.inputNames.filter((name) => !(name in files));
  if (missing.length > 0) throw new Error(`no data for input(s) ${missing.join(', ')}`);
  const unknown = Object.keys(files).filter((name) => !session.inputNames.includes(name));
  if (unknown.length > 0) throw new Error(`the model has no input(s) ${unknown.join(', ')}`);
  feeds = {};
  for (const name of session.inputNames) {
    const npy = parseNpy(files[name]);
    feeds[name] = new ort.Tensor(npy.type, npy.data, npy.dims);
  }
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
