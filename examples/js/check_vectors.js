// A CI without Python: check a JavaScript implementation's stages against one of userdp's vector
// files (vectors/ALGORITHM.json, docs/vectors.md), reading the file alone.
//
//   node examples/js/check_vectors.js vectors/epasto2020.wa.json examples/js/wa.js [--json]
//
// IMPLEMENTATION is a module exporting { name, stages: { stage(dataset, params) }, release?(dataset,
// params, rng, size) } (as examples/js/wa.js does); a stage or release refuses an input by throwing
// userdp_protocol.js's Refused. The rules are the file's (docs/vectors.md):
// - a "valid" vector: every stage of `expected` the implementation has returns a value equal to it,
//   entry by entry, |got - expected| <= tolerance.rtol * max(1, |expected|) (NaN equals NaN; shapes
//   and keys must match), and its release, if it has one, does not refuse;
// - an "invalid" vector: every stage of `refused_by` it has (and "mechanism", its release) refuses.
// - a "statistical" vector (if the implementation has a release; --no-statistical skips them): n
//   releases per side of the neighbouring pair, one release call per side with generator(seeds[side])
//   of userdp_protocol.js, the tested coordinate taken; it fails when a side's Kolmogorov-Smirnov
//   statistic against the side's law exceeds tests.distribution.critical_value, or a side's count of
//   releases above tests.privacy.set.above lies outside tests.privacy.accept[side]. A correct
//   release fails it with probability at most tests.false_alarm (<= 1e-4; the file says how each
//   rate is computed); tests.power states what a wrong sampler fails it with.
// A stage gets the dataset only if the file's `stages` says it takes one (else null), and only the
// parameters the file lists for it; {"nonfinite": "inf"} is Infinity.
// Exit status: 0 every vector checked passes (at least one checked); 1 a vector fails; 2 usage error
// or nothing to check (every vector skipped is not a pass).
'use strict';

const fs = require('fs');
const path = require('path');
const { Refused, generator } = require('./userdp_protocol.js');

function decode(v) {                 // the files' JSON form: {"nonfinite": "inf"} for non-finite numbers
  if (Array.isArray(v)) return v.map(decode);
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === 'nonfinite') return { inf: Infinity, '-inf': -Infinity, nan: NaN }[v.nonfinite];
    return Object.fromEntries(keys.map((k) => [k, decode(v[k])]));
  }
  return v;
}

// null if got equals want under the file's rule, else what differs
function compare(got, want, rtol, where = '') {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) {
      return `${where} has ${Array.isArray(got) ? got.length + ' entries' : JSON.stringify(got)}, expected ${want.length} entries`;
    }
    for (let j = 0; j < want.length; j++) {
      const why = compare(got[j], want[j], rtol, `${where}[${j}]`);
      if (why) return why;
    }
    return null;
  }
  if (want !== null && typeof want === 'object') {
    const g = got !== null && typeof got === 'object' && !Array.isArray(got) ? Object.keys(got).sort() : null;
    const w = Object.keys(want).sort();
    if (g === null || g.join() !== w.join()) return `${where} has keys ${JSON.stringify(g)}, expected ${JSON.stringify(w)}`;
    for (const k of w) {
      const why = compare(got[k], want[k], rtol, `${where}.${k}`);
      if (why) return why;
    }
    return null;
  }
  if (typeof got !== 'number') return `${where} is ${JSON.stringify(got)}, expected the number ${want}`;
  if (got === want || (Number.isNaN(got) && Number.isNaN(want))) return null;
  const err = Math.abs(got - want) / Math.max(1, Math.abs(want));
  if (err <= rtol) return null;     // NaN fails here too
  const rel = Math.abs(got - want) / Math.max(Math.abs(got), Math.abs(want));
  return `${where} got ${got}, expected ${want} (relative difference ${rel.toPrecision(3)}; ` +
    `|got - expected| / max(1, |expected|) = ${err.toPrecision(3)} > rtol ${rtol})`;
}

function callStage(impl, spec, stage, dataset, params) {
  const kw = Object.fromEntries(spec.params.filter((k) => k in params).map((k) => [k, params[k]]));
  return impl.stages[stage](spec.dataset ? dataset : null, kw);
}

function release(impl, dataset, params, id) {
  return impl.release(dataset, params, generator(id * 29), 2);
}

function runVector(impl, doc, v) {
  const dataset = v.dataset, params = decode(v.params), rtol = doc.tolerance.rtol;
  const has = (s) => (s === 'mechanism' ? typeof impl.release === 'function' : typeof impl.stages[s] === 'function');
  const reasons = [];
  let ran = 0;
  if (v.result === 'valid') {
    for (const s of Object.keys(v.expected).filter(has)) {
      ran++;
      let got;
      try {
        got = callStage(impl, doc.stages[s], s, dataset, params);
      } catch (e) {
        reasons.push(`${s}: ${e instanceof Refused ? 'refused' : 'threw on'} a valid input: ${e.message}`);
        continue;
      }
      const why = compare(got, decode(v.expected[s]), rtol, s);
      if (why) reasons.push(why);
    }
    if (has('mechanism')) {
      ran++;
      try { release(impl, dataset, params, v.id); } catch (e) {
        reasons.push(`mechanism: ${e instanceof Refused ? 'refused' : 'threw on'} a valid input: ${e.message}`);
      }
    }
  } else {
    for (const s of v.refused_by.filter(has)) {
      ran++;
      try {
        if (s === 'mechanism') release(impl, dataset, params, v.id);
        else callStage(impl, doc.stages[s], s, dataset, params);
      } catch (e) {
        if (!(e instanceof Refused)) reasons.push(`${s}: threw ${e.name} instead of refusing: ${e.message}`);
        continue;
      }
      reasons.push(`${s}: accepted an input the paper excludes`);
    }
  }
  return { id: v.id, comment: v.comment, flags: v.flags, result: v.result,
    verdict: reasons.length ? 'fail' : (ran ? 'pass' : 'skipped'), reasons };
}

// ---------------------------------------------------------------- statistical vectors
// erfc by Numerical Recipes' Chebyshev fit (fractional error below 1.2e-7): far below the KS critical
// values (> 0.01 at the files' n), so it cannot move a verdict but in a tie of that size.
function erfc(x) {
  const z = Math.abs(x), t = 1 / (1 + 0.5 * z);
  const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? r : 2 - r;
}

function lawCdf(family, x, { location, scale }) {
  const z = (x - location) / scale;
  if (family === 'laplace') return z < 0 ? 0.5 * Math.exp(z) : 1 - 0.5 * Math.exp(-z);
  if (family === 'gaussian') return 0.5 * erfc(-z / Math.SQRT2);
  throw new Error(`unknown noise family ${family}`);
}

function ksStatistic(sample, family, law) {     // D_n = max_i max(i/n - F(x_(i)), F(x_(i)) - (i-1)/n)
  const x = Float64Array.from(sample).sort(), n = x.length;
  let d = 0;
  for (let i = 0; i < n; i++) {
    const F = lawCdf(family, x[i], law);
    d = Math.max(d, (i + 1) / n - F, F - i / n);
  }
  return d;
}

function runStatistical(impl, v) {
  const params = decode(v.params), t = v.tests, c = t.distribution.critical_value, above = t.privacy.set.above;
  const reasons = [], measured = {};
  for (const side of ['D', 'D_prime']) {
    let out;
    try {
      out = impl.release(v.pair[side], params, generator(v.seeds[side]), v.n);
    } catch (e) {
      reasons.push(`${side}: the release ${e instanceof Refused ? 'refused' : 'threw on'} a valid input: ${e.message}`);
      continue;
    }
    const x = v.coordinate === null ? out : out.map((r) => (Array.isArray(r) ? r[v.coordinate] : undefined));
    if (!Array.isArray(x) || x.length !== v.n || !x.every((r) => typeof r === 'number' && Number.isFinite(r))) {
      reasons.push(`${side}: expected ${v.n} finite releases${v.coordinate === null ? '' : ` of coordinate ${v.coordinate}`}`);
      continue;
    }
    const law = v.law[side], d = ksStatistic(x, v.law.family, law);
    const count = x.filter((r) => r > above).length, [lo, hi] = t.privacy.accept[side];
    measured[side] = { ks: d, count };
    if (d > c) reasons.push(`${side}: distribution: D_n = ${d.toPrecision(4)} > critical value ${c.toPrecision(4)} ` +
      `(not ${v.law.family} of location ${law.location}, scale ${law.scale})`);
    if (count < lo || count > hi) reasons.push(`${side}: privacy: ${count} of ${v.n} releases above ${above}, ` +
      `outside [${lo}, ${hi}]`);
  }
  return { id: v.id, comment: v.comment, flags: v.flags, verdict: reasons.length ? 'fail' : 'pass', reasons,
    measured, false_alarm: t.false_alarm };
}

function check(doc, impl, statistical = true) {
  const results = doc.vectors.map((v) => runVector(impl, doc, v));
  const stat = statistical && typeof impl.release === 'function'
    ? (doc.statistical || []).map((v) => runStatistical(impl, v)) : [];
  const n = (verdict) => results.filter((r) => r.verdict === verdict).length;
  const statFailed = stat.filter((r) => r.verdict === 'fail').length;
  const checked = results.length - n('skipped') + stat.length;
  return { algorithm: doc.algorithm, generator: doc.generator, target: impl.name,
    verdict: n('fail') || statFailed ? 'fail' : (checked ? 'pass' : 'nothing checked'),
    vectors: results.length, checked, passed: n('pass'), failed: n('fail'), skipped: n('skipped'), results,
    statistical: stat, statistical_passed: stat.length - statFailed, statistical_failed: statFailed };
}

function main(argv) {
  const args = argv.filter((a) => a !== '--json' && a !== '--no-statistical');
  if (args.length !== 2) {
    process.stderr.write('usage: node check_vectors.js VECTOR_FILE IMPLEMENTATION.js [--json] [--no-statistical]\n');
    return 2;
  }
  const doc = JSON.parse(fs.readFileSync(args[0], 'utf8'));
  if (doc.schema !== 'userdp.vectors/1') {
    process.stderr.write(`${args[0]}: not a userdp vector file (schema "userdp.vectors/1")\n`);
    return 2;
  }
  const impl = require(path.resolve(args[1]));
  const report = check(doc, impl, !argv.includes('--no-statistical'));
  if (report.verdict === 'nothing checked') {
    process.stderr.write(`${impl.name}: nothing to check: it has none of the stages ${Object.keys(doc.stages).join(', ')} ` +
      'and no release; every vector would be skipped, which is not a pass\n');
    return 2;
  }
  if (argv.includes('--json')) {
    process.stdout.write(JSON.stringify(report) + '\n');
  } else {
    for (const r of report.results.filter((x) => x.verdict === 'fail')) {
      const comment = r.comment.length > 90 ? `${r.comment.slice(0, 87)}...` : r.comment;   // the file has it whole
      process.stdout.write(`FAIL vector ${r.id} [${r.flags.join(', ')}]: ${comment}\n`);
      for (const why of r.reasons) process.stdout.write(`  ${why}\n`);
      const mid = doc.vectors.find((v) => v.id === r.id).intermediate;    // the paper's values in between
      if (mid) process.stdout.write(`  the file's intermediate values (compare yours): ${JSON.stringify(mid)}\n`);
    }
    for (const r of report.statistical.filter((x) => x.verdict === 'fail')) {
      const comment = r.comment.length > 90 ? `${r.comment.slice(0, 87)}...` : r.comment;
      process.stdout.write(`FAIL statistical vector ${r.id} [${r.flags.join(', ')}]: ${comment}\n`);
      for (const why of r.reasons) process.stdout.write(`  ${why}\n`);
      process.stdout.write(`  (a correct release fails this vector with probability at most ${r.false_alarm.toPrecision(2)})\n`);
    }
    const stat = report.statistical.length
      ? `; statistical: ${report.statistical_passed} passed, ${report.statistical_failed} failed` : '';
    process.stdout.write(`${report.algorithm}: ${report.target}: ${report.verdict.toUpperCase()} ` +
      `(${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped of ${report.vectors}${stat})\n`);
  }
  return report.verdict === 'pass' ? 0 : 1;
}

module.exports = { check, compare, decode, erfc, ksStatistic };
if (require.main === module) process.exitCode = main(process.argv.slice(2));
