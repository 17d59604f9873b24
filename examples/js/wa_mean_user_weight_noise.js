// wa.js with one bug, of a class userdp's corpus already holds (epasto2020/wa-mean-user-weight-noise,
// bug class understated-sensitivity): the noise covers the MEAN user weight, B / m, instead of
// Lemma 1's worst user, B max_q W_q. On imbalanced users the heavy user's weight is many times
// the mean: userdp validate reports a privacy violation (and the sensitivity stage's deviation).
'use strict';

const correct = require('./wa.js');
const P = require('./userdp_protocol.js');

const buggy = {
  ...correct,
  name: 'wa_mean_user_weight_noise.js',
  stages: {
    ...correct.stages,
    sensitivity(dataset, params) {
      correct.stages.weights(dataset, params);               // the same input checks
      return params.B / P.users(dataset).size;               // BUG: B times the mean user weight 1/m
    },
  },
};

module.exports = buggy;            // for examples/js/check_vectors.js
if (require.main === module) P.serve(buggy);
