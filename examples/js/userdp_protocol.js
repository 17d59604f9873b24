// The userdp process protocol, version 1, for Node.js (docs/protocol.md): read one JSON request
// per line on stdin, write one JSON response per line on stdout, in order. An algorithm is an
// object { name, stages: { stage(dataset, params) -> value }, release(dataset, params, rng, size)
// -> array of `size` releases }; serve(algorithm) runs the loop until stdin closes.
//
// A stage or release that throws Refused answers {"error": {"kind": "refused"}} (the input is
// outside the algorithm's domain); any other exception answers {"error": {"kind": "failed"}}.
'use strict';

const readline = require('readline');

class Refused extends Error {}

// ---------------------------------------------------------------- randomness
// xoshiro128** (Blackman and Vigna), seeded from the request's seed (an integer below 2^53) by
// splitmix32 on its two 32-bit halves. uniform() has 53 random bits, in the open interval (0, 1).
function splitmix32(a) {
  return function () {
    a = (a + 0x9e3779b9) | 0;
    let z = a;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function generator(seed) {
  const hi = Math.floor(seed / 4294967296), lo = seed >>> 0;
  const mix = splitmix32(lo ^ Math.imul(hi, 0x27d4eb2f));
  let s0 = mix(), s1 = mix(), s2 = mix(), s3 = mix() ^ hi;
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1;
  function next() {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 11);
    return result;
  }
  function uniform() {           // (k + 0.5) / 2^53, k uniform on 53 bits: never 0, never 1
    const a = next() >>> 5, b = next() >>> 6;
    return (a * 67108864 + b + 0.5) / 9007199254740992;
  }
  return {
    uniform,
    laplace(scale) {             // inverse CDF: -b sign(u) log(1 - 2|u|), u uniform on (-1/2, 1/2)
      const u = uniform() - 0.5;
      return -scale * Math.sign(u) * Math.log1p(-2 * Math.abs(u));
    },
  };
}

function rotl(x, k) { return (x << k) | (x >>> (32 - k)); }

// ---------------------------------------------------------------- input checks
function finiteNumber(x, name) {
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new Refused(`${name} must be a finite number, got ${JSON.stringify(x)}`);
  return x;
}

function epsilon(x) {           // the reference's range: [1e-50, 50]
  finiteNumber(x, 'epsilon');
  if (!(x >= 1e-50 && x <= 50)) throw new Refused(`epsilon must lie in [1e-50, 50], got ${x}`);
  return x;
}

function positive(x, name) {
  finiteNumber(x, name);
  if (!(x >= 1e-50 && x <= 1e50)) throw new Refused(`${name} must lie in [1e-50, 1e50], got ${x}`);
  return x;
}

function scalarValues(dataset) {
  if (dataset === null || dataset.values.length === 0) throw new Refused('the dataset must hold at least one record');
  for (const v of dataset.values) if (typeof v !== 'number') throw new Refused('values must be scalars (one number per record)');
  return dataset.values;
}

// users: Map from user id to the indices of its records, in record order
function users(dataset) {
  const out = new Map();
  dataset.user_ids.forEach((u, i) => { if (!out.has(u)) out.set(u, []); out.get(u).push(i); });
  return out;
}

// ---------------------------------------------------------------- the loop
// Large batches of numbers go packed ("releases_hex": little-endian binary64 in hexadecimal):
// exact, and far cheaper to write and to read than decimal text. Small batches stay readable JSON.
const PACK_FROM = 100;

function releasesField(out) {
  if (out.length < PACK_FROM) return { releases: out };
  const k = Array.isArray(out[0]) ? out[0].length : 0;
  const ok = out.every((r) => (k === 0 ? Number.isFinite(r)
    : Array.isArray(r) && r.length === k && r.every(Number.isFinite)));
  if (!ok) return { releases: out };           // nulls, nested parts, non-finite: the JSON array
  const view = new DataView(new ArrayBuffer(8 * out.length * Math.max(k, 1)));
  let at = 0;
  for (const r of out) {
    for (const x of (k === 0 ? [r] : r)) { view.setFloat64(at, x, true); at += 8; }
  }
  const shape = k === 0 ? [out.length] : [out.length, k];
  return { releases_hex: { shape, data: Buffer.from(view.buffer).toString('hex') } };
}

function answer(algorithm, request) {
  const id = request.id;
  if (request.hello !== undefined) {
    return { id, hello: { protocol: 1, name: algorithm.name, stages: Object.keys(algorithm.stages), releases: true } };
  }
  try {
    if (request.size !== undefined) {
      const rng = generator(request.seed);
      return { id, ...releasesField(algorithm.release(request.dataset, request.params, rng, request.size)) };
    }
    const stages = {};
    for (const s of request.stages) {
      if (!(s in algorithm.stages)) throw new Error(`no stage ${s}`);
      stages[s] = algorithm.stages[s](request.dataset, request.params);
    }
    return { id, stages };
  } catch (e) {
    return { id, error: { kind: e instanceof Refused ? 'refused' : 'failed', message: String(e.message) } };
  }
}

function serve(algorithm) {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  lines.on('line', (line) => {
    process.stdout.write(JSON.stringify(answer(algorithm, JSON.parse(line))) + '\n');
  });
}

module.exports = { Refused, generator, finiteNumber, epsilon, positive, scalarValues, users, serve };
