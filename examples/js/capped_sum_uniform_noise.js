// capped_sum.js with one bug in its sampler, of the class noise-distribution: uniform noise of the
// variance of Laplace(T / epsilon) (half-width b sqrt(6)) instead of Laplace noise. The stages are right and
// the noise has the right variance, so only a test of the release's law shows it: the statistical
// vectors of vectors/amin2019.capped-sum.json fail it (a bounded noise gives no eps-DP at all).
'use strict';

const P = require('./userdp_protocol.js');
const correct = require('./capped_sum.js');

const buggy = {
  ...correct,
  name: 'capped_sum_uniform_noise.js',
  release(dataset, params, rng, size) {
    const g = this.stages.statistic(dataset, params);
    const a = this.stages.noise_scale(null, params) * Math.sqrt(6);
    const out = new Array(size);
    for (let k = 0; k < size; k++) out[k] = g + a * (2 * rng.uniform() - 1);   // BUG: uniform noise
    return out;
  },
};

module.exports = buggy;            // for examples/js/check_vectors.js
if (require.main === module) P.serve(buggy);
