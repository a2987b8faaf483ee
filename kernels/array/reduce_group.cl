/* reduce_group.cl: combines the accumulators ${@acc} of a work-group's work-items into ${@tree}[0],
 * through local memory, for any work-group size from 1 to 1024 (not only powers of two).
 *
 * Each round folds the upper half of the live values onto the lower half; when their count is odd,
 * the middle one waits for the next round. The code runs at kernel function scope, where OpenCL C
 * wants __local arrays declared, and every work-item of the group must reach it, since it holds
 * barriers. Afterwards ${@tree}[0] holds the group's result, visible to every work-item, and
 * ${@lid} is the work-item's local id.
 * Placeholders: $ACC_T, the accumulator's type; $LOCAL_ID; $LOCAL_SIZE, a literal;
 * $COMBINE(x, y), the reduction's combination of two accumulators. */
__local $ACC_T ${@tree}[$LOCAL_SIZE];
const uint ${@lid} = (uint)($LOCAL_ID);
${@tree}[${@lid}] = ${@acc};
barrier(CLK_LOCAL_MEM_FENCE);
for (uint ${@live} = $LOCAL_SIZE; ${@live} > 1;) {
  const uint ${@half} = (${@live} + 1) / 2;
  if (${@lid} < ${@live} - ${@half})
    ${@tree}[${@lid}] = $COMBINE(${@tree}[${@lid}], ${@tree}[${@lid} + ${@half}]);
  barrier(CLK_LOCAL_MEM_FENCE);
  ${@live} = ${@half};
}
