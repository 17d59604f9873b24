// capped_sum.js with one bug, of a class userdp's corpus already holds (amin2019/per-record-cap,
// bug class per-record-bound): each RECORD is capped at T instead of each user's total. A user
// with r records at T then moves the sum by r T while the noise covers T: the release is r eps-DP,
// not eps-DP. userdp validate reports a privacy violation (and the statistic stage's deviation).
'use strict';

const P = require('./userdp_protocol.js');
const correct = require('./capped_sum.js');

const buggy = {
  ...correct,
  name: 'capped_sum_per_record_cap.js',
  stages: {
    ...correct.stages,
    statistic(dataset, { T }) {
      T = P.positive(T, 'T');
      let g = 0;
      for (const v of P.scalarValues(dataset)) {
        if (v < 0) throw new P.Refused(`values must be >= 0, got ${v}`);
        g += Math.min(v, T);                           // BUG: min(x_i, T) per record
      }
      return g;
    },
  },
};

module.exports = buggy;            // for examples/js/check_vectors.js
if (require.main === module) P.serve(buggy);
