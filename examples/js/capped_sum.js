// Amin et al. 2019, §3: the capped sum g_T(S) = sum over users l of min(x_l, T), where x_l is
// user l's total, released with Laplace noise of scale T / epsilon (eps-DP under add/remove-user:
// adding or removing a user moves g_T by at most T). Validate it against userdp's reference:
//
//   userdp validate amin2019.capped-sum --command "node examples/js/capped_sum.js"
'use strict';

const P = require('./userdp_protocol.js');

function cap(T) { return P.positive(T, 'T'); }

const cappedSum = {
  name: 'capped_sum.js',
  stages: {
    statistic(dataset, { T }) {                     // g_T: each user's TOTAL capped at T
      T = cap(T);
      const x = P.scalarValues(dataset);
      for (const v of x) if (v < 0) throw new P.Refused(`values must be >= 0 (§3), got ${v}`);
      let g = 0;
      for (const records of P.users(dataset).values()) {
        let total = 0;
        for (const i of records) total += x[i];
        g += Math.min(total, T);
      }
      return g;
    },
    sensitivity(dataset, { T }) { return cap(T); },                   // eq. 2: Delta = T
    noise_scale(dataset, { T, epsilon }) { return cap(T) / P.epsilon(epsilon); },
  },
  release(dataset, params, rng, size) {
    const g = this.stages.statistic(dataset, params);
    const b = this.stages.noise_scale(null, params);
    const out = new Array(size);
    for (let k = 0; k < size; k++) out[k] = g + rng.laplace(b);
    return out;
  },
};

module.exports = cappedSum;
if (require.main === module) P.serve(cappedSum);
