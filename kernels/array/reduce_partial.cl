/* reduce_partial.cl: the EPILOGUE of a reduction's main kernel: each work-group combines its
 * work-items' accumulators and stores the group's partial result in the workspace, one slot per
 * group, for the finalize kernel.
 * Placeholders: $GROUP_TREE, reduce_group.cl expanded; $WORKSPACE, the partials; $GROUP_ID. */
$GROUP_TREE
if (${@lid} == 0) $WORKSPACE[$GROUP_ID] = ${@tree}[0];
