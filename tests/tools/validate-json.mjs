// Validates a JSON document against a JSON Schema (draft 2020-12) with ajv in strict mode, every error
// reported with the path of the value at fault. ajv comes from the peer folder that
// scripts/fetch-models.sh fills ($CHIPFIT_PEER_DIR, default <repo>/.cache/peer).
// Usage: node validate-json.mjs SCHEMA DATA
// Exit: 0 valid; 1 DATA is not valid (or not JSON); 2 usage, a missing file, a bad schema, no ajv.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const kUsage = 'usage: node validate-json.mjs SCHEMA DATA';

function fail(code, message) {
  console.error(`validate-json: ${message}`);
  process.exit(code);
}

const args = process.argv.slice(2);
if (args.length !== 2 || args.some((a) => a.startsWith('-'))) fail(2, kUsage);
const [schemaFile, dataFile] = args;

function readJson(file, codeIfNotJson) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    fail(2, `cannot read ${file}: ${e.code ?? e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    fail(codeIfNotJson, `${file} is not JSON: ${e.message}`);
  }
}

const schema = readJson(schemaFile, 2);
const data = readJson(dataFile, 1);

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const peer = process.env.CHIPFIT_PEER_DIR || path.join(repo, '.cache/peer');
// Resolve as a module inside the peer folder would: its node_modules, whatever NODE_PATH says.
const requireFromPeer = createRequire(path.join(path.resolve(peer), 'package.json'));
let Ajv2020;
try {
  Ajv2020 = requireFromPeer('ajv/dist/2020').default;
} catch (e) {
  fail(2, `ajv is not installed under ${peer} (${e.code ?? e.message}): run scripts/fetch-models.sh`);
}

// strict: unknown keywords, types that contradict their keywords and the like are schema errors, so
// a typo in the schema cannot quietly make it accept everything.
const ajv = new Ajv2020({ strict: true, allErrors: true });
let validate;
try {
  validate = ajv.compile(schema);
} catch (e) {
  fail(2, `${schemaFile} is not a valid schema: ${e.message}`);
}

if (validate(data)) {
  console.log(`validate-json: ${dataFile} is valid against ${schema.$id ?? schemaFile}`);
  process.exit(0);
}
for (const error of validate.errors) {
  const where = error.instancePath === '' ? '(document)' : error.instancePath;
  const params = Object.keys(error.params).length ? ` ${JSON.stringify(error.params)}` : '';
  console.error(`${where}: ${error.message}${params}  [schema ${error.schemaPath}]`);
}
const count = validate.errors.length;
console.error(`validate-json: ${dataFile} is NOT valid against ${schema.$id ?? schemaFile}: ${count} error(s)`);
process.exit(1);
