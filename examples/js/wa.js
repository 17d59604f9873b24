// Epasto et al. 2020, §3: optimal weighted averaging WA_c. Record i of user q gets Lemma 3's
// weight c_i = min(h, s_q) / (s_q n_h), n_h = sum over users of min(h, s_l), at Claim 1's exact
// minimiser h* of v(h) = (sigma^2 sum_l min(h, s_l)^2 / s_l + 2 (B h / eps)^2) / n_h^2; the
// release is sum_i c_i y_i + Laplace(B max_q W_q / eps), W_q = sum over user q's records of c_i
// (Lemma 1; eps-DP when one user's values change and the sizes s_l stay public).
//
//   userdp validate epasto2020.wa --command "node examples/js/wa.js"
'use strict';

const P = require('./userdp_protocol.js');

function check(dataset, { B, epsilon, sigma }) {
  B = P.positive(B, 'B');
  P.epsilon(epsilon);
  if (sigma === null || sigma === undefined) sigma = B / 2;             // the largest sd on [0, B]
  else if (P.finiteNumber(sigma, 'sigma') < 0) throw new P.Refused(`sigma must be >= 0, got ${sigma}`);
  for (const y of P.scalarValues(dataset)) {
    if (!(y >= 0 && y <= B)) throw new P.Refused(`values must lie in [0, B] = [0, ${B}] (§3), got ${y}`);
  }
  return { B, epsilon, sigma };
}

// Claim 1's minimiser. On [u_j, u_(j+1)] between consecutive distinct sizes, with A = sum of the
// sizes <= u_j, r = #sizes > u_j, R = sum of 1/s over those, K = 2 B^2 / eps^2, P = sigma^2 R + K:
// v(h) = (sigma^2 A + P h^2) / (A + r h)^2 falls up to h0 = r sigma^2 / P and rises after it.
function optimalH(sizes, { B, epsilon, sigma }) {
  const mult = new Map();
  for (const s of sizes) mult.set(s, (mult.get(s) || 0) + 1);
  const u = [...mult.keys()].sort((a, b) => a - b);
  if (u.length === 1) return u[0];
  const K = 2 * B * B / (epsilon * epsilon);
  let A = 0, r = sizes.length, R = 0;
  for (const s of sizes) R += 1 / s;
  let best = null;
  for (let j = 0; j + 1 < u.length; j++) {
    const c = mult.get(u[j]);
    A += u[j] * c; r -= c; R -= c / u[j];
    const Pj = sigma * sigma * Math.max(R, 0) + K;
    const h = Math.min(Math.max(r * sigma * sigma / Pj, u[j]), u[j + 1]);
    const v = (sigma * sigma * A + Pj * h * h) / ((A + r * h) * (A + r * h));
    if (best === null || v < best.v) best = { v, h };
  }
  return best.h;
}

function weights(dataset, params) {
  const p = check(dataset, params);
  const byUser = P.users(dataset);
  const sizes = [...byUser.values()].map((r) => r.length);
  const h = optimalH(sizes, p);
  let nh = 0;
  for (const s of sizes) nh += Math.min(h, s);
  const c = new Array(dataset.values.length);
  for (const records of byUser.values()) {
    const s = records.length;
    for (const i of records) c[i] = Math.min(h, s) / (s * nh);
  }
  return c;
}

function userWeights(dataset, c) {             // W_q for every user
  return [...P.users(dataset).values()].map((records) => records.reduce((t, i) => t + c[i], 0));
}

const wa = {
  name: 'wa.js',
  stages: {
    weights,
    statistic(dataset, params) {
      const c = weights(dataset, params);
      return dataset.values.reduce((t, y, i) => t + c[i] * y, 0);
    },
    sensitivity(dataset, params) {             // Lemma 1: B max_q W_q
      return check(dataset, params).B * Math.max(...userWeights(dataset, weights(dataset, params)));
    },
    noise_scale(dataset, params) {
      return this.sensitivity(dataset, params) / params.epsilon;
    },
  },
  release(dataset, params, rng, size) {
    const beta = this.stages.statistic(dataset, params);
    const b = this.stages.noise_scale(dataset, params);
    const out = new Array(size);
    for (let k = 0; k < size; k++) out[k] = beta + rng.laplace(b);
    return out;
  },
};

module.exports = wa;
if (require.main === module) P.serve(wa);
