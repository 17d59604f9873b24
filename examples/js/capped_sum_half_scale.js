// capped_sum.js with one bug in its sampler, of the class noise-distribution: the release draws Laplace
// noise of half the scale T / epsilon that noise_scale reports (a broken sampler, e.g. a Laplace built as
// an exponential of rate 2 / b). Every noise-free stage is right, so every deterministic vector passes;
// the statistical vectors of vectors/amin2019.capped-sum.json fail it (the release is 2 eps-DP, not eps-DP).
'use strict';

const P = require('./userdp_protocol.js');
const correct = require('./capped_sum.js');

const buggy = {
  ...correct,
  name: 'capped_sum_half_scale.js',
  release(dataset, params, rng, size) {
    const g = this.stages.statistic(dataset, params);
    const b = this.stages.noise_scale(null, params);
    const out = new Array(size);
    for (let k = 0; k < size; k++) out[k] = g + rng.laplace(b / 2);      // BUG: half the scale
    return out;
  },
};

module.exports = buggy;            // for examples/js/check_vectors.js
if (require.main === module) P.serve(buggy);
