// Runs an ONNX model with ONNX Runtime (onnxruntime-node, CPU) on .npy inputs and writes each
// output as <name>.npy: the peer oracle for chipfit's outputs on real models.
// Usage: node ort_run.mjs MODEL OUT_DIR NAME=FILE.npy ...   (ORT found through NODE_PATH; ORT_OPT_LEVEL)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

const kTypes = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array],
  '<f2': ['float16', Uint16Array], '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const [type, Ctor] = kTypes[descr] ?? (() => { throw new Error(`${file}: dtype ${descr} unsupported`); })();
  const bytes = buf.subarray(start + headerLen);
  const data = new Ctor(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return new ort.Tensor(type, type === 'bool' ? Array.from(data, Boolean) : data, shape);
}

function writeNpy(file, tensor) {
  const descr = Object.entries(kTypes).find(([, [t]]) => t === tensor.type)?.[0];
  if (!descr) throw new Error(`output type ${tensor.type} unsupported`);
  const dims = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.type === 'bool' ? Uint8Array.from(tensor.data, Number) : tensor.data;
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
                                        Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

const [model, outDir, ...specs] = process.argv.slice(2);
const feeds = {};
for (const spec of specs) {
  const eq = spec.indexOf('=');
  feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
}
// ORT_OPT_LEVEL=disabled runs the graph as written (no fusions): what ONNX defines, against what ORT's
// optimised graph computes.
const graphOptimizationLevel = process.env.ORT_OPT_LEVEL ?? 'all';
const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'], graphOptimizationLevel });
const results = await session.run(feeds);
fs.mkdirSync(outDir, { recursive: true });
for (const name of session.outputNames) {
  writeNpy(path.join(outDir, name.replace(/[/:]/g, '_') + '.npy'), results[name]);
}
