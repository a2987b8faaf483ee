/* reduce_finalize.cl: the FINALIZE kernel of a reduction, one work-group: combines the partial
 * results of all the main kernel's groups and writes the reduction's result.
 * Placeholders: $ACC_T; $IDENTITY, the accumulator's start; $COMBINE(x, y); $LOCAL_ID;
 * $LOCAL_SIZE; $NUM_GROUPS, the number of partials (it may be 0); $WORKSPACE, the partials;
 * $GROUP_TREE, reduce_group.cl expanded; $FINISH(x), the result made of the combined partials. */
$ACC_T ${@acc} = $IDENTITY;
for (uint ${@g} = (uint)($LOCAL_ID); ${@g} < (uint)($NUM_GROUPS); ${@g} += $LOCAL_SIZE)
  ${@acc} = $COMBINE(${@acc}, $WORKSPACE[${@g}]);
$GROUP_TREE
if (${@lid} == 0) ${out=} = $FINISH(${@tree}[0]);
